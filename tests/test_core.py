"""simcore.core directly: the engine's timers and clock, and the named random streams."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from simcore.core.engine import Engine
from simcore.core.rng import Streams, replication_seed, stable_hash
from simcore.errors import InputError


# -- engine -------------------------------------------------------------------------------------
def test_callbacks_fire_at_their_time_and_the_clock_reads_it():
    engine = Engine()
    seen = []
    engine.schedule(5.0, lambda: seen.append(("a", engine.now)))
    engine.call(2.5, lambda x: seen.append((x, engine.now)), "b")
    assert engine.now == 0.0
    engine.run()
    assert seen == [("b", 2.5), ("a", 5.0)]
    assert engine.now == 5.0
    assert engine.events == 2


def test_run_until_stops_the_clock_there():
    engine = Engine()
    seen = []
    engine.schedule(10.0, lambda: seen.append(engine.now))
    engine.run(until=4.0)
    assert (seen, engine.now) == ([], 4.0)
    engine.run()
    assert (seen, engine.now) == ([10.0], 10.0)


def test_a_cancelled_timer_never_fires_and_is_not_counted():
    engine = Engine()
    seen = []
    keep = engine.schedule(1.0, lambda: seen.append("keep"))
    drop = engine.schedule(2.0, lambda: seen.append("drop"))
    drop.cancel()
    engine.run()
    assert seen == ["keep"]
    assert engine.events == 1
    keep.cancel()                      # cancelling a timer that already fired changes nothing
    engine.run()
    assert (seen, engine.events) == (["keep"], 1)


def test_a_callback_may_cancel_a_timer_due_at_the_same_time():
    """Two timers at t=3; the first cancels the second, which then does not fire."""
    engine = Engine()
    seen = []
    second = None

    def first():
        seen.append("first")
        second.cancel()

    engine.schedule(3.0, first)
    second = engine.schedule(3.0, lambda: seen.append("second"))
    engine.run()
    assert seen == ["first"]


def test_simultaneous_callbacks_fire_in_scheduling_order():
    """Same time: first scheduled, first fired; one scheduled during the run for the current
    time (delay 0) comes after those already waiting for that time."""
    engine = Engine()
    seen = []

    def spawn():
        seen.append("spawn")
        engine.schedule(0.0, lambda: seen.append("late"))

    for name in ("a", "b"):
        engine.schedule(1.0, lambda n=name: seen.append(n))
    engine.schedule(1.0, spawn)
    engine.schedule(1.0, lambda: seen.append("c"))
    engine.schedule(0.5, lambda: seen.append("early"))
    engine.run()
    assert seen == ["early", "a", "b", "spawn", "c", "late"]


def test_stop_ends_the_run_after_the_callbacks_already_due():
    """stop() at t=2: the callback already queued for t=2 still fires, one queued after the stop
    and a later one do not (and are not counted) until the run is resumed."""
    engine = Engine()
    seen = []

    def halt():
        seen.append("halt")
        engine.stop()
        engine.schedule(0.0, lambda: seen.append("after"))

    engine.schedule(2.0, halt)
    engine.schedule(2.0, lambda: seen.append("queued"))
    engine.schedule(5.0, lambda: seen.append("later"))
    engine.run()
    assert (seen, engine.now, engine.events) == (["halt", "queued"], 2.0, 2)
    engine.run()
    assert (seen, engine.now, engine.events) == (["halt", "queued", "after", "later"], 5.0, 4)


def test_negative_delay_is_refused():
    engine = Engine()
    with pytest.raises(ValueError, match="Negative delay"):
        engine.schedule(-1.0, lambda: None)
    with pytest.raises(ValueError, match="Negative delay"):
        engine.call(-1e-9, print, "x")


# -- random streams --------------------------------------------------------------------------------
def streams(root=7, experiment="exp", cell=0, rep=0) -> Streams:
    return Streams(replication_seed(root, experiment, cell, rep))


def draws(gen: np.random.Generator, n: int = 5) -> list[float]:
    return gen.random(n).tolist()


def test_same_seed_gives_the_same_streams():
    a, b = streams(), streams()
    assert draws(a["arrivals"]) == draws(b["arrivals"])
    assert draws(a["demand"]) == draws(b["demand"])


def test_different_names_give_different_sequences():
    s = streams()
    assert draws(s["arrivals"]) != draws(s["demand"])


def test_draws_in_one_stream_do_not_move_another():
    quiet, busy = streams(), streams()
    busy["arrivals"].random(1000)
    assert draws(busy["demand"]) == draws(quiet["demand"])


def test_adding_a_stream_does_not_shift_the_others():
    """Asking for a new stream, before or between draws of others, changes none of them."""
    plain, extra = streams(), streams()
    extra["policy:new"].random(10)
    first = draws(extra["arrivals"], 3)
    extra["another"].random(10)
    assert first + draws(extra["arrivals"], 3) == draws(plain["arrivals"], 6)


def test_the_order_streams_are_asked_for_does_not_matter():
    one, two = streams(), streams()
    a1, d1 = draws(one["arrivals"]), draws(one["demand"])
    d2, a2 = draws(two["demand"]), draws(two["arrivals"])
    assert (a1, d1) == (a2, d2)


@pytest.mark.parametrize("other", [dict(root=8), dict(experiment="exp2"), dict(cell=1), dict(rep=1)])
def test_each_part_of_the_replication_seed_changes_the_streams(other):
    assert draws(streams()["arrivals"]) != draws(streams(**other)["arrivals"])


def test_fresh_restarts_a_stream_from_its_first_draw():
    s = streams()
    first = draws(s["policy:x"])
    assert draws(s["policy:x"]) != first           # the cached generator goes on
    assert draws(s.fresh("policy:x")) == first


def test_stable_hash_does_not_depend_on_the_python_process():
    """Unlike hash(), the stream keys are the same under any PYTHONHASHSEED."""
    code = "from simcore.core.rng import stable_hash; print(stable_hash('arrivals'), hash('arrivals'))"
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.append(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                   check=True).stdout.split())
    assert outs[0][0] == outs[1][0] == str(stable_hash("arrivals"))
    assert outs[0][1] != outs[1][1]                 # the built-in hash does vary
    assert 0 <= stable_hash("arrivals") < 2**32


# -- the queue monitor ------------------------------------------------------------------------------

def _counter_run(period, duration, stop_at=None):
    """A counter that goes +1 at 1.5, +1 at 3 and -1 at 3 (both at the same instant), +1 at 3.5."""
    from simcore.core.monitor import Monitor

    engine = Engine()
    state = {"n": 0}

    def add(k):
        state["n"] += k

    for at, k in ((1.5, 1), (3.0, 1), (3.0, -1), (3.5, 1)):
        engine.call(at, add, k)
    if stop_at is not None:
        engine.schedule(stop_at, engine.stop)
    monitor = Monitor(engine, {"n": lambda: state["n"], "twice": lambda: 2 * state["n"]}, period, duration)
    monitor.start()
    engine.run()
    return monitor.frame()


def test_the_monitor_samples_every_period_up_to_the_monitoring_time():
    """Period 1 for 4: samples at 0, 1, 2, 3, 4 read 0, 0, 1, 1, 2; at 3 both changes of that
    instant have happened (+1 - 1), so the sample reads 1, not 2."""
    frame = _counter_run(1.0, 4.0)
    n = frame[frame.queue == "n"]
    assert n.time.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert n.value.tolist() == [0.0, 0.0, 1.0, 1.0, 2.0]
    assert frame[frame.queue == "twice"].value.tolist() == [0.0, 0.0, 2.0, 2.0, 4.0]


def test_the_monitor_stops_at_the_last_period_within_the_time_or_with_the_run():
    """Period 1.5 for 4: samples at 0, 1.5 (after the +1 due then), 3.0 (1 + 1 - 1 = 1); 4.5 is
    past the time. A run stopped at 2.2 ends the series after 0, 1, 2."""
    frame = _counter_run(1.5, 4.0)
    assert frame[frame.queue == "n"][["time", "value"]].values.tolist() == [[0.0, 0.0], [1.5, 1.0], [3.0, 1.0]]
    assert _counter_run(1.0, 10.0, stop_at=2.2)[lambda f: f.queue == "n"].time.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("period, duration, probes, message", [
    (0.0, 10.0, {"q": lambda: 0}, "sampling period 0.0 is not a positive number"),
    (1.0, -1.0, {"q": lambda: 0}, "monitoring time -1.0 is not a non-negative number"),
    (math.nan, 1.0, {"q": lambda: 0}, "sampling period nan"),
    (1.0, 1.0, {}, "no queue to sample"),
])
def test_the_monitor_refuses_bad_settings(period, duration, probes, message):
    from simcore.core.monitor import Monitor

    with pytest.raises(InputError, match=message):
        Monitor(Engine(), probes, period, duration)


@pytest.mark.parametrize("text, expected", [("10:5000", (10.0, 5000.0)), ("0.5:0", (0.5, 0.0))])
def test_monitor_settings_parse(text, expected):
    from simcore.core.monitor import parse_monitor

    assert parse_monitor(text) == expected


@pytest.mark.parametrize("text", ["10", "a:b", "0:10", "5:-1", "1:2:3", "inf:4"])
def test_bad_monitor_settings_are_one_sentence(text):
    from simcore.core.monitor import parse_monitor

    with pytest.raises(InputError, match="--monitor"):
        parse_monitor(text)
