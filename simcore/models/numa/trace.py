"""Per-task traces in the style of Mehta and Kanungo's process traces.

A trace is the list of segments a task went through: waiting in a CPU's run queue, running on
a CPU, or blocked in I/O, each with its length in ms. A migration closes the wait segment on
the source CPU and opens one on the destination, so ``P11.wait(361) - P10.wait(34)`` reads
"waited 361 ms on CPU 11, was pulled to CPU 10, waited 34 ms there".
"""

from __future__ import annotations

from simcore.models.numa.task import Task


def format_trace(task: Task, name: str | None = None, far=None) -> str:
    """``P10.wait(1384) - P10.run(79) - IO(21) - ...`` (times rounded to ms), optionally prefixed;
    segments on CPUs for which ``far(cpu)`` holds are wrapped in ``**`` (mehta's bold), except the
    first, the creating CPU, which precedes placement and so the choice of the home node."""
    def seg(i, kind, cpu, d):
        text = f"IO({d:.0f})" if kind == "io" else f"P{cpu}.{kind}({d:.0f})"
        return f"**{text}**" if far is not None and i and kind != "io" and far(cpu) else text

    parts = [seg(i, kind, cpu, d) for i, (kind, cpu, d) in enumerate(task.trace or ())]
    text = " - ".join(parts)
    return f"{name}: {text}" if name else text
