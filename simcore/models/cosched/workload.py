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
    """Tasks in arrival order, each drawn from the replication's streams."""

    def __init__(self, params: dict, streams):
        self.mit, self.mst = params["mit"], params["mst"]
        self.pdt, self.mm = params["pdt"], params["mm"]
        self.stretch = 1.0 / (1.0 - self.mst / self.mit)
        self._gaps, self._service = streams.fresh("arrivals"), streams.fresh("service")
        self._kind, self._messages = streams.fresh("kind"), streams.fresh("messages")
        self.index, self.clock = 0, 0.0

    def next(self) -> Task:
        self.clock += float(self._gaps.exponential(self.mit))
        service = float(self._service.exponential(self.mst))
        distributed = bool(self._kind.random() < self.pdt)
        points: tuple[float, ...] = ()
        if distributed:
            k = int(self._messages.integers(0, self.mm + 1))
            points = tuple(sorted(float(u) * service for u in self._messages.random(k)))
        sends = tuple(self.clock + x * self.stretch for x in points)
        task = Task(self.index, self.clock, service, distributed, points, sends)
        self.index += 1
        return task
