"""Where a task's distance from its memory costs it time: ``locality_scope``.

'cpu' (the model's default): a burst is drawn as work at local-memory speed, so a
task far from home runs each burst longer but has as many bursts, and as many I/O waits, as at
home: distance stretches only the task's CPU time.

'lifetime' (corr05 section 4, where a burst is the time a task runs
without losing the processor, never more than its timeslice): a burst is drawn as that wall time,
and the work it serves is the wall time over the slowdown of the CPU the task is on when it draws
the burst. A task far from home then needs more bursts, and so more I/O waits, for the same
demand: distance stretches its whole lifetime. The burst of a task's creation is drawn at the
speed of the CPU it is placed on: home speed when its memory is allocated where it starts
(home_node 'start'), so the machine's own SLIT distances must be 10.

The rule is ``task_kernels.next_burst``: a burst's work is divided by the task's ``F_SCALE``, the
slowdown of the CPU it was last dispatched on (``run_kernels.run``), 1 under 'cpu'.
"""

from __future__ import annotations

from simcore.errors import InputError


def check_machine(params: dict, machine) -> None:
    """'lifetime' draws a new task's first burst at home speed: refuse a machine whose own
    distances are not 10 (a task would run at another speed at home)."""
    if params["locality_scope"] != "lifetime":
        return
    own = [float(row[i]) for i, row in enumerate(machine.distances)]
    if any(d != 10.0 for d in own):
        raise InputError(f"numa model: parameter 'locality_scope' 'lifetime' needs every node's own SLIT distance "
                         f"to be 10, and topology {getattr(machine, 'name', '?')!r} has {sorted(set(own))}")
