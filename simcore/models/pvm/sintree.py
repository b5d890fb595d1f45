"""The sintree application on the cluster, and the seven PVM modes of section 5.2 (docs/pvm-model.md).

One distributed process per node; the one on node 0 is the root. Each of N iterations the root
computes, sends one message to every other process (one to many) and receives one reply from
each (many to one, in the order they arrive); every other process receives the root's message,
computes and replies. A message arrives in two fragments, a head and then a body. Original PVM
reads them in two steps; MXI reads both in one. A read whose fragment has not arrived waits:
it spins for up to ``spin`` µs first where the mode spins on that read (SPIN and PRIOSPIN on the
body, MXISPIN on the single read), and blocks otherwise or when the spin runs out.

Each process is a generator of steps: ``(CPU, µs)`` or ``(WAIT, take, spin)``, where ``take()``
returns the awaited message once it is there (and None before). The steps of a receive are the
same every time (``_reads``): the read of a body takes the body of the message whose head the
process read last.
"""

from __future__ import annotations

from collections import deque
from functools import partial

from simcore.models.pvm.node import Node, Proc

CPU, WAIT = "cpu", "wait"


class Delays:
    """One generator's delays: ``delays(mean)`` is the value ``float(rng.exponential(mean))`` would
    give in the same sequence, drawn 64 standard exponentials at a time (numpy scales a standard
    exponential draw by the mean); with ``fixed`` delays, or a mean of 0, the mean itself (no draw)."""

    __slots__ = ("rng", "fixed", "_ahead")

    def __init__(self, rng, fixed: bool = False):
        self.rng, self.fixed = rng, fixed
        self._ahead: list[float] = []

    def __call__(self, mean: float) -> float:
        if self.fixed or mean <= 0:
            return mean
        if not self._ahead:
            self._ahead = self.rng.standard_exponential(64).tolist()[::-1]
        return mean * self._ahead.pop()


class Message:
    """A message on its way to process ``dst``; ``body``: its body fragment has arrived."""

    __slots__ = ("dst", "body")

    def __init__(self, dst: int):
        self.dst, self.body = dst, False


class Sintree:
    """The application's processes, their programs and their messages on ``nodes``."""

    def __init__(self, engine, nodes: list[Node], params: dict, mode, streams, done):
        self.engine, self.nodes, self.mode, self.done = engine, nodes, mode, done
        self.n = params["iterations"]
        self.compute, self.send_cost, self.read_cost = params["compute"], params["send_cost"], params["read_cost"]
        self.latency, self.jitter, self.gap = params["latency"], params["jitter"], params["fragment_gap"]
        self.spin = params["spin"]
        fixed = params["delays"] == "fixed"
        self.dps = [node.add(Proc(f"dist{i}", params["priority"], rt=1 if mode.realtime else 0))
                    for i, node in enumerate(nodes)]
        self.arrived: list[deque] = [deque() for _ in nodes]
        self._compute = [Delays(streams.fresh(f"compute:{i}"), fixed) for i in range(len(nodes))]
        self._links = [{b: Delays(streams.fresh(f"link:{a}:{b}"), fixed) for b in range(len(nodes)) if a != b}
                       for a in range(len(nodes))]
        self.programs = [self._root()] + [self._child(i) for i in range(1, len(nodes))]
        self._resume = [partial(self._advance, i) for i in range(len(nodes))]  # after a CPU step
        self._reading: list[Message | None] = [None for _ in nodes]   # the message whose head i read last
        self._reads = [self._receive_steps(i) for i in range(len(nodes))]
        self._spin_overs = [partial(self._spin_over, i) for i in range(len(nodes))]

    def start(self) -> None:
        for i, p in enumerate(self.dps):
            self._advance(i)            # to its first step: computing, or waiting for the root's message
            if p.waiting is None or p.spinning:
                self.nodes[i].wake(p)

    # -- the programs ----------------------------------------------------------------------------
    def _root(self):
        children, reads, send = range(1, len(self.nodes)), self._reads[0], (CPU, self.send_cost)
        for _ in range(self.n):
            yield CPU, self._compute[0](self.compute)
            for c in children:
                yield send
                self._send(0, c)
            for _ in children:
                for step in reads:
                    yield step

    def _child(self, i: int):
        reads, send = self._reads[i], (CPU, self.send_cost)
        for _ in range(self.n):
            for step in reads:
                yield step
            yield CPU, self._compute[i](self.compute)
            yield send
            self._send(i, 0)

    def _receive_steps(self, i: int) -> tuple:
        """The steps of one receive by process i: head then body (two reads), or both in one read (MXI)."""
        read = (CPU, self.read_cost)
        if self.mode.fragments == 2:
            body_spin = self.spin if self.mode.spin_on == "data" else 0.0
            return (WAIT, partial(self._head, i), 0.0), read, (WAIT, partial(self._body, i), body_spin), read
        return (WAIT, partial(self._whole, i), self.spin if self.mode.spin_on == "message" else 0.0), read

    def _head(self, i: int):
        queue = self.arrived[i]
        if not queue:
            return None
        msg = self._reading[i] = queue.popleft()
        return msg

    def _body(self, i: int):
        msg = self._reading[i]
        return msg if msg.body else None

    def _whole(self, i: int):
        queue = self.arrived[i]
        return queue.popleft() if queue and queue[0].body else None

    # -- messages --------------------------------------------------------------------------------
    def _send(self, src: int, dst: int) -> None:
        """The head arrives after latency + jitter, the body a fragment gap later (exponential draws)."""
        delays = self._links[src][dst]
        head = self.latency + delays(self.jitter)
        body = head + delays(self.gap)
        msg = Message(dst)
        self.engine.call(head, self._head_arrives, msg)
        self.engine.call(body, self._body_arrives, msg)

    def _head_arrives(self, msg: Message) -> None:
        self.arrived[msg.dst].append(msg)
        if self.dps[msg.dst].waiting is not None:
            self._poke(msg.dst)

    def _body_arrives(self, msg: Message) -> None:
        msg.body = True
        if self.dps[msg.dst].waiting is not None:
            self._poke(msg.dst)

    # -- driving the programs --------------------------------------------------------------------
    def _advance(self, i: int) -> None:
        """Run process i's program to its next step that takes time or waits (a read whose
        fragment is there takes it and goes on)."""
        program = self.programs[i]
        while True:
            try:
                step = next(program)
            except StopIteration:
                self.nodes[i].exit(self.dps[i])
                if i == 0:
                    self.done()
                return
            if step[0] is CPU:
                self.nodes[i].run(self.dps[i], step[1], self._resume[i])
                return
            take = step[1]
            if take() is None:
                self._wait(i, take, step[2])
                return

    def _wait(self, i: int, take, spin: float) -> None:
        p, node = self.dps[i], self.nodes[i]
        p.waiting = take
        if spin > 0:
            p.spinning = True
            node.run(p, spin, self._spin_overs[i])
        else:
            node.block(p)

    def _spin_over(self, i: int) -> None:
        p = self.dps[i]
        p.spinning = False
        self.nodes[i].block(p)

    def _poke(self, i: int) -> None:
        """A fragment arrived at node i while its process waits: it resumes if that is what it waits for."""
        p, node = self.dps[i], self.nodes[i]
        if p.waiting() is None:
            return
        p.waiting = None
        if p.spinning:          # running (or preempted) in its spin: the rest of the spin is dropped
            node.drop_step(p)
            p.spinning = False
            self._advance(i)
        else:                   # blocked: its next step is set, then it wakes up
            self._advance(i)
            node.wake(p)
