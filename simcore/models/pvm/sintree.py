"""The sintree application on the cluster, and the seven PVM modes of section 5.2 (docs/pvm-model.md).

One distributed process per node; the one on node 0 is the root. Each of N iterations the root
computes, sends one message to every other process (one to many) and receives one reply from
each (many to one, in the order they arrive); every other process receives the root's message,
computes and replies. A message arrives in two fragments, a head and then a body. Original PVM
reads them in two steps; MXI reads both in one. A read whose fragment has not arrived waits:
it spins for up to ``spin`` µs first where the mode spins on that read (SPIN and PRIOSPIN on the
body, MXISPIN on the single read), and blocks otherwise or when the spin runs out.

Each process is a generator of steps: ``(CPU, µs)`` or ``(WAIT, take, spin)``, where ``take()``
returns the awaited message once it is there (and None before).
"""

from __future__ import annotations

from collections import deque
from functools import partial

from simcore.models.pvm.node import Node, Proc

CPU, WAIT = "cpu", "wait"


class Exponentials:
    """One generator's exponential draws, 64 standard ones at a time: ``draws(mean)`` is the value
    ``float(rng.exponential(mean))`` would give in the same sequence (numpy scales a standard
    exponential draw by the mean)."""

    __slots__ = ("rng", "_ahead")

    def __init__(self, rng):
        self.rng = rng
        self._ahead: list[float] = []

    def __call__(self, mean: float) -> float:
        if not self._ahead:
            self._ahead = self.rng.standard_exponential(64).tolist()[::-1]
        return mean * self._ahead.pop()


class Message:
    __slots__ = ("body",)

    def __init__(self):
        self.body = False


class Sintree:
    """The application's processes, their programs and their messages on ``nodes``."""

    def __init__(self, engine, nodes: list[Node], params: dict, mode, streams, done):
        self.engine, self.nodes, self.mode, self.done = engine, nodes, mode, done
        self.n = params["iterations"]
        self.compute, self.send_cost, self.read_cost = params["compute"], params["send_cost"], params["read_cost"]
        self.latency, self.jitter, self.gap = params["latency"], params["jitter"], params["fragment_gap"]
        self.spin = params["spin"]
        self.fixed = params["delays"] == "fixed"
        self.dps = [node.add(Proc(f"dist{i}", params["priority"], rt=1 if mode.realtime else 0))
                    for i, node in enumerate(nodes)]
        self.arrived: list[deque] = [deque() for _ in nodes]
        self._compute = [Exponentials(streams.fresh(f"compute:{i}")) for i in range(len(nodes))]
        self._links = {(a, b): Exponentials(streams.fresh(f"link:{a}:{b}")) for a in range(len(nodes))
                       for b in range(len(nodes)) if a != b}
        self.programs = [self._root()] + [self._child(i) for i in range(1, len(nodes))]
        self._resume = [partial(self._advance, i) for i in range(len(nodes))]  # after a CPU step

    def start(self) -> None:
        for i, p in enumerate(self.dps):
            self._advance(i)            # to its first step: computing, or waiting for the root's message
            if p.waiting is None or p.spinning:
                self.nodes[i].wake(p)

    # -- the programs ----------------------------------------------------------------------------
    def _root(self):
        children = range(1, len(self.nodes))
        for _ in range(self.n):
            yield CPU, self._draw_compute(0)
            for c in children:
                yield CPU, self.send_cost
                self._send(0, c)
            for _ in children:
                yield from self._receive(0)

    def _child(self, i: int):
        for _ in range(self.n):
            yield from self._receive(i)
            yield CPU, self._draw_compute(i)
            yield CPU, self.send_cost
            self._send(i, 0)

    def _receive(self, i: int):
        """One message: head then body (two reads), or both in one read (MXI)."""
        if self.mode.fragments == 2:
            msg = yield WAIT, lambda: self._head(i), 0.0
            yield CPU, self.read_cost
            yield WAIT, lambda: msg if msg.body else None, self.spin if self.mode.spin_on == "data" else 0.0
            yield CPU, self.read_cost
        else:
            yield WAIT, lambda: self._whole(i), self.spin if self.mode.spin_on == "message" else 0.0
            yield CPU, self.read_cost

    def _head(self, i: int):
        return self.arrived[i].popleft() if self.arrived[i] else None

    def _whole(self, i: int):
        queue = self.arrived[i]
        return queue.popleft() if queue and queue[0].body else None

    def _draw(self, draws: Exponentials, mean: float) -> float:
        """An exponential draw of mean ``mean`` (the mean itself with fixed delays; 0 for a mean of 0)."""
        if self.fixed or mean <= 0:
            return mean
        return draws(mean)

    def _draw_compute(self, i: int) -> float:
        return self._draw(self._compute[i], self.compute)

    # -- messages --------------------------------------------------------------------------------
    def _send(self, src: int, dst: int) -> None:
        """The head arrives after latency + jitter, the body a fragment gap later (exponential draws)."""
        rng = self._links[(src, dst)]
        head = self.latency + self._draw(rng, self.jitter)
        body = head + self._draw(rng, self.gap)
        msg = Message()
        self.engine.call(head, self._head_arrives, (dst, msg))
        self.engine.call(body, self._body_arrives, (dst, msg))

    def _head_arrives(self, arg) -> None:
        dst, msg = arg
        self.arrived[dst].append(msg)
        self._poke(dst)

    def _body_arrives(self, arg) -> None:
        dst, msg = arg
        msg.body = True
        self._poke(dst)

    # -- driving the programs --------------------------------------------------------------------
    def _advance(self, i: int, value=None) -> None:
        """Run process i's program to its next step that takes time or waits."""
        p, node, program = self.dps[i], self.nodes[i], self.programs[i]
        while True:
            try:
                step = program.send(value)
            except StopIteration:
                node.exit(p)
                if i == 0:
                    self.done()
                return
            if step[0] == CPU:
                node.run(p, step[1], self._resume[i])
                return
            value = step[1]()
            if value is None:
                self._wait(i, step[1], step[2])
                return

    def _wait(self, i: int, take, spin: float) -> None:
        p, node = self.dps[i], self.nodes[i]
        p.waiting = take
        if spin > 0:
            p.spinning = True
            node.run(p, spin, lambda: self._spin_over(i))
        else:
            node.block(p)

    def _spin_over(self, i: int) -> None:
        p = self.dps[i]
        p.spinning = False
        self.nodes[i].block(p)

    def _poke(self, i: int) -> None:
        """A fragment arrived at node i: the process resumes if it was waiting for it."""
        p, node = self.dps[i], self.nodes[i]
        if p.waiting is None:
            return
        got = p.waiting()
        if got is None:
            return
        p.waiting = None
        if p.spinning:          # running (or preempted) in its spin: the rest of the spin is dropped
            node.drop_step(p)
            p.spinning = False
            self._advance(i, got)
        else:                   # blocked: its next step is set, then it wakes up
            self._advance(i, got)
            node.wake(p)
