"""The DCNDC node's task stream (Solsona et al., section 5.3).

Tasks arrive in a Poisson stream (exponential gaps of mean ``mit``) and need an exponential
service of mean ``mst``. A task is distributed with probability ``pdt``; a distributed task
receives k messages, k uniform on 0..``mm``. The paper does not say when they arrive, so (stated
in docs/cosched-model.md) a message is tied to the point of the program where the task reads it:
the task needs message j once it has executed x_j, the x_j sorted uniforms on [0, service], and
message j arrives at arrival + x_j / (1 - rho), rho = mst / mit. That is when the remote partner
sends it if it started at the same instant and runs the same program at the share of a CPU that
a processor-sharing node with this load leaves (1 - rho): messages come early for a task that
runs ahead of its partner and late for one that lags, as in a lock-step (sintree) application.

Every quantity of a task is drawn when it arrives, from streams of its own, so every policy sees
the same tasks (common random numbers) whatever it schedules.
"""

from __future__ import annotations

from typing import NamedTuple


class Task(NamedTuple):
    """One task as the workload makes it: what every policy sees."""

    index: int
    arrival: float
    service: float
    distributed: bool             # a distributed task (it may still receive no message)
    points: tuple[float, ...] = ()   # executed time at which the task reads message j (sorted)
    sends: tuple[float, ...] = ()    # time at which message j arrives at the node (sorted)


class TaskStream:
    """Tasks in arrival order, each drawn from the replication's streams.

    The gaps, services and kinds are drawn ``BLOCK`` at a time: numpy gives the same sequence in
    blocks as one by one, and ``exponential(mean)`` is ``mean`` times a standard exponential draw
    (test_task_stream_draws_each_quantity_from_its_named_stream compares the tasks with draws made one
    at a time)."""

    BLOCK = 256

    def __init__(self, params: dict, streams):
        self.mit, self.mst = params["mit"], params["mst"]
        self.pdt, self.mm = params["pdt"], params["mm"]
        self.stretch = 1.0 / (1.0 - self.mst / self.mit)
        self._gaps, self._service = streams.fresh("arrivals"), streams.fresh("service")
        self._kind, self._messages = streams.fresh("kind"), streams.fresh("messages")
        self._ahead: list[tuple[float, float, float]] = []
        self.index, self.clock = 0, 0.0

    def _refill(self) -> None:
        """The next ``BLOCK`` (standard gap, standard service, kind uniform) triples, last first."""
        n = self.BLOCK
        draws = zip(self._gaps.standard_exponential(n).tolist(), self._service.standard_exponential(n).tolist(),
                    self._kind.random(n).tolist())
        self._ahead = list(draws)[::-1]

    def next(self) -> Task:
        if not self._ahead:
            self._refill()
        gap, service, kind = self._ahead.pop()
        self.clock += self.mit * gap
        service *= self.mst
        distributed = kind < self.pdt
        points: tuple[float, ...] = ()
        sends: tuple[float, ...] = ()
        if distributed:
            k = int(self._messages.integers(0, self.mm + 1))
            if k:
                points = tuple(sorted(u * service for u in self._messages.random(k).tolist()))
                sends = tuple(self.clock + x * self.stretch for x in points)
        task = Task(self.index, self.clock, service, distributed, points, sends)
        self.index += 1
        return task
