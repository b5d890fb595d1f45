"""The seven PVM environments of section 5.2, registered as the pvm model's policies.

- ``pvm``: original PVM: head and body read in two steps; a read that finds nothing blocks.
- ``spin``: implicit coscheduling: the read of the body (data) fragment spins before it blocks.
- ``mxi``: head and body read in one step.
- ``mxispin``: MXI, and that one read spins before it blocks.
- ``prio``: the distributed processes always have the highest priority (real-time: a woken one
  takes the CPU at once and no local task takes it from them).
- ``priospin``: PRIO and SPIN.
- ``explicit``: a dts daemon on every node, of the highest priority, sends STOP to the local
  distributed process every ``explicit_run`` µs and CONTINUE ``explicit_stop`` µs later, each
  costing it ``signal_cost`` µs (S_sig) besides the switches to and from it, so that a STOP or a
  CONTINUE costs T_ex = 4 W + S_sig (equation 3); the distributed processes have high priority
  between the signals. The nodes' daemons are in phase (the master starts them together).
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.models.pvm.node import Proc
from simcore.models.registry import register
from simcore.vocabulary.domains import NONNEGATIVE, POSITIVE

MODEL = "pvm"


class Mode:
    """Original PVM; subclasses change how messages are read and how the processes are scheduled."""

    name = "base"
    HYPERPARAMETERS: dict[str, Parameter] = {}
    fragments = 2          # reads per message
    spin_on = "none"       # 'none', 'data' (the body's read) or 'message' (MXI's one read)
    realtime = False

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"{MODEL} policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng

    def attach(self, engine, nodes, dps, params: dict) -> None:
        """Start whatever the mode runs beside the application (EXPLICIT's daemons)."""


@register(MODEL, "pvm")
class Pvm(Mode):
    """Original PVM."""


@register(MODEL, "spin")
class Spin(Mode):
    spin_on = "data"


@register(MODEL, "mxi")
class Mxi(Mode):
    fragments = 1


@register(MODEL, "mxispin")
class MxiSpin(Mode):
    fragments, spin_on = 1, "message"


@register(MODEL, "prio")
class Prio(Mode):
    realtime = True


@register(MODEL, "priospin")
class PrioSpin(Mode):
    realtime, spin_on = True, "data"


@register(MODEL, "explicit")
class Explicit(Mode):
    """STOP and CONTINUE from a daemon on every node; the distributed processes at high priority."""

    realtime = True
    HYPERPARAMETERS = {
        "explicit_run": Parameter(
            90000.0, "EXPLICIT: µs the distributed processes run before STOP (section 5.2: 90 000).", POSITIVE
        ),
        "explicit_stop": Parameter(
            10000.0, "EXPLICIT: µs they stay stopped before CONTINUE (section 5.2: 10 000).", POSITIVE
        ),
        "signal_cost": Parameter(
            5.0,
            "EXPLICIT: S_sig, µs the daemon needs to signal the node's distributed "
            "process (not given; docs/pvm-model.md).",
            NONNEGATIVE,
        ),
    }

    def attach(self, engine, nodes, dps, params: dict) -> None:
        for node, dp in zip(nodes, dps):
            daemon = node.add(Proc(f"dts{node.index}", params["priority"], rt=2))
            engine.call(self.hp["explicit_run"], self._signal, (engine, node, daemon, dp, True))

    def _signal(self, arg) -> None:
        """The daemon wakes, sends STOP (or CONTINUE), sleeps; the next signal is armed."""
        engine, node, daemon, dp, stop = arg

        def send() -> None:
            (node.stop if stop else node.cont)(dp)
            node.block(daemon)

        node.run(daemon, self.hp["signal_cost"], send)
        node.wake(daemon)
        wait = self.hp["explicit_stop"] if stop else self.hp["explicit_run"]
        engine.call(wait, self._signal, (engine, node, daemon, dp, not stop))
