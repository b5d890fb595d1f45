"""SimPy's private state is read and written in one module, simcore/core/engine.py, and this
pins the SimPy release whose internals it relies on: the clock ``_now``, the queue ``_queue`` of
(time, priority, insertion number, event) and the counter ``_eid`` that numbers insertions."""

from __future__ import annotations

import re
from itertools import count
from pathlib import Path

import simpy
from simpy.events import NORMAL

from simcore.core.engine import END, Engine, ProxyCalendar

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\.(_now|_queue|_eid)\b")


def test_only_the_engine_touches_simpys_private_state():
    touching = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "simcore").rglob("*.py")
                      if PRIVATE.search(p.read_text(encoding="utf-8")))
    assert touching == ["simcore/core/engine.py"], touching


def test_the_pinned_simpy_keeps_its_queue_as_the_adapter_reads_it():
    """A new SimPy release must be checked against engine.py before the pin moves: its queue
    entries, its counter and its clock as ProxyCalendar reads and sets them."""
    assert simpy.__version__ == "4.1.2"
    engine = Engine()
    env = engine.env
    assert isinstance(env._eid, count) and env._now == 0.0 and env._queue == []
    seen = []
    engine.call(2.0, seen.append, "b")
    engine.call_at(1.0, seen.append, "a")
    (t1, p1, e1, _), (t2, p2, e2, _) = sorted(env._queue)[:2]
    assert (t1, p1, t2, p2) == (1.0, NORMAL, 2.0, NORMAL) and e1 == e2 + 1      # numbered as inserted
    engine.run()
    assert seen == ["a", "b"] and engine.now == env._now == 2.0


def test_the_proxy_calendars_view_of_simpy():
    """A compiled model's view: SimPy's queue (empty: its head is END), its next insertion
    number (taken back from a kernel that took none or five), its clock moved."""

    class Model(ProxyCalendar):
        def __init__(self):
            self.engine = Engine()
            self._start_proxies()

        def _on_proxy(self, _event):
            pass

    model = Model()
    assert not model._simpy_queue and END[0] == float("inf")
    first = model.engine.next_number()
    assert model.engine.next_number() == first + 1
    assert model.handing([0], 0, lambda: None) is None and model.engine.next_number() == first + 2   # took none
    buf = [0]
    model.handing(buf, 0, lambda: buf.__setitem__(0, buf[0] + 5))                                    # took five
    assert model.engine.next_number() == first + 8
    model.engine.call(5.0, print, "x")
    assert model._simpy_queue[0][:3] == (5.0, NORMAL, first + 9)
    model._jump(3.0)
    assert model.engine.now == model.engine.env._now == 3.0
