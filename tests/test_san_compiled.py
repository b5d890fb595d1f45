"""The compiled SAN walker (simcore.san.compiled_walk) is the Python walker, bit for bit: the same
measures at every observation time, the same number of events fired and the same final clock."""

import numpy as np
import pytest
import simpy
from test_san import random_san
from test_san_simulation import _finishing

from simcore.san import Rate, San, SanError, compiled_walk
from simcore.san import simulate as S
from simcore.san.corr05 import build


def _walk(san: San, times, measures: dict, compiled: bool, seed: int, r: int, stop_early=True):
    """(values, steps, final clock) of replication ``r`` walked one way."""
    model = S._Model(san, measures)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(r,))))
    sizes = [len(s) for s in san.automata.values()]
    if compiled:
        walker = compiled_walk.CompiledWalker(compiled_walk.Tables(model, sizes), np.asarray(times, float), rng,
                                              stop_early, S.BLOCK)
    else:
        walker = S._Walker(model, np.asarray(times, float), rng, stop_early)
    env = simpy.Environment()
    env.process(walker.run(env))
    env.run()
    return walker.values, walker.steps, env.now


def _same(san, times, measures, seed, reps=3, stop_early=True) -> int:
    """Assert both walkers agree on ``reps`` replications; the events fired in all."""
    fired = 0
    for r in range(reps):
        ref = _walk(san, times, measures, False, seed, r, stop_early)
        got = _walk(san, times, measures, True, seed, r, stop_early)
        np.testing.assert_array_equal(got[0], ref[0])
        assert got[1:] == ref[1:]
        fired += ref[1]
    return fired


def test_random_models_walk_the_same_paths():
    """Twelve random models (some absorb within a few events, most keep moving)."""
    fired = 0
    for seed in range(12):
        san = random_san(seed)
        levels = {name: name for name in san.automata}
        levels["first"] = f"{next(iter(san.automata))} == s0"
        fired += _same(san, np.linspace(0, 3, 31), levels, seed, reps=5)
    assert fired > 300                                             # the paths really move


@pytest.mark.parametrize("levels", ["2", "n"])
def test_corr05_walks_the_same_paths(levels):
    san = build("corr05-4x1", levels)
    measures = {"finished": "Proc == En", "proc": "Proc"}
    assert _same(san, [0, 0.1, 0.3, 1, 3, 10, 30.0], measures, 5, reps=2) > 1000


@pytest.mark.parametrize("stop_early", [True, False])
def test_absorbing_and_frozen_walks_end_at_the_same_clock(stop_early):
    """_finishing: routing with two destinations, a constantly-zero event, an absorbing end; the
    early stop when the measured automaton is stuck."""
    san = _finishing()
    for measures in ({"done": "P == Done"}, {"both": "P == Done and Cpu == A"}):
        _same(san, np.linspace(0, 50, 26), measures, 4, reps=5, stop_early=stop_early)


def test_no_observation_times_and_no_live_events():
    san = random_san(1)
    _same(san, [], {"x": next(iter(san.automata))}, 2)
    still = San()
    still.automaton("A", ["a", "b"]).local("A", "a", "b", 0.0)
    values, steps, clock = _walk(still, [0, 1, 2.0], {"a": "A == a"}, True, 1, 0)
    assert values.tolist() == [[1.0]] * 3 and steps == 0 and clock == 0


def test_uniforms_drawn_one_at_a_time_resume_mid_step(monkeypatch):
    """With blocks of one uniform the kernel stops for more before every step that may draw
    several; the path is the one drawn in blocks of 1024."""
    san = random_san(0)
    levels = {name: name for name in san.automata}
    ref = _walk(san, np.linspace(0, 3, 31), levels, False, 8, 0)
    monkeypatch.setattr(S, "BLOCK", 1)
    got = _walk(san, np.linspace(0, 3, 31), levels, True, 8, 0)
    np.testing.assert_array_equal(got[0], ref[0])
    assert got[1:] == ref[1:] and ref[1] > 10


def _negative_when(state: str) -> San:
    """A cycles a -> b -> a; B's event has rate -1 while A is in ``state`` (c is never reached)."""
    san = San()
    san.automaton("A", ["a", "b", "c"]).automaton("B", ["x", "y"])
    san.local("A", "a", "b", 2.0).local("A", "b", "a", 3.0)
    san.local("B", "x", "y", Rate(f"(A == {state}) * -1 + (A != {state}) * 1")).local("B", "y", "x", 1.0)
    return san


def test_a_rate_is_computed_and_checked_only_in_states_the_walk_reaches():
    assert _walk(_negative_when("c"), [0, 1, 5.0], {"y": "B == y"}, True, 3, 0)[1] > 5
    with pytest.raises(SanError, match="is -1 in a reachable state"):
        _walk(_negative_when("b"), [0, 1, 5.0], {"y": "B == y"}, True, 3, 0)


def test_the_tables_are_shared_and_filled_only_where_walked():
    san = build("corr05-4x1", "2")
    model = S._Model(san, {"f": "Proc == En"})
    tables = compiled_walk.Tables(model, [len(s) for s in san.automata.values()])
    rng = np.random.default_rng(1)
    compiled_walk.CompiledWalker(tables, np.array([0, 1.0]), rng, True, S.BLOCK).walk()
    known = (~np.isnan(tables.r_table)).sum()
    assert 0 < known < tables.r_table.size
    compiled_walk.CompiledWalker(tables, np.array([0, 1.0]), rng, True, S.BLOCK).walk()
    assert (~np.isnan(tables.r_table)).sum() >= known


def test_trajectories_walk_compiled_unless_switched_off_or_too_large(monkeypatch):
    san = random_san(4)
    levels = {name: name for name in san.automata}
    made = []
    real = compiled_walk.CompiledWalker.__init__
    monkeypatch.setattr(compiled_walk.CompiledWalker, "__init__", lambda self, *a: made.append(1) or real(self, *a))
    fast = S.trajectories(san, np.linspace(0, 2, 9), levels, reps=4, seed=6)
    assert len(made) == 4
    monkeypatch.setattr(S, "COMPILED", False)
    np.testing.assert_array_equal(S.trajectories(san, np.linspace(0, 2, 9), levels, reps=4, seed=6), fast)
    monkeypatch.setattr(S, "COMPILED", True)
    monkeypatch.setattr(compiled_walk, "LIMIT", 1)
    np.testing.assert_array_equal(S.trajectories(san, np.linspace(0, 2, 9), levels, reps=4, seed=6), fast)
    assert len(made) == 4


class _Scripted:
    """An rng that hands out the given uniforms, then 0.9s."""

    def __init__(self, *values):
        self.values = list(values)

    def random(self, n):
        out, self.values = (self.values + [0.9] * n)[:n], self.values[n:]
        return np.asarray(out)


def _fork() -> San:
    """A leaves a for b or c at rate 1 each; b and c hold for ever."""
    san = San()
    san.automaton("A", ["a", "b", "c"]).local("A", "a", "b", 1.0).local("A", "a", "c", 1.0)
    return san


@pytest.mark.parametrize("compiled", [False, True])
def test_a_uniform_on_a_boundary_and_an_event_at_the_horizon_by_hand(compiled):
    """Uniforms 0.3 then 0.5: the first event comes at t1 = -log1p(-0.3) / 2, and 0.5 x 2 = 1 is
    exactly the first event's cumulative rate, so the event is the second (the first whose
    cumulative rate exceeds it): A goes to c. With t1 also the last observation time, the event
    still fires (the walk ends only past the horizon) and t1 sees c (the value at a time is the
    state after the events up to it)."""
    t1 = -np.log1p(-0.3) / 2
    model, times = S._Model(_fork(), {"A": "A"}), np.array([0.0, t1])
    if compiled:
        walker = compiled_walk.CompiledWalker(compiled_walk.Tables(model, [3]), times, _Scripted(0.3, 0.5),
                                              True, S.BLOCK)
    else:
        walker = S._Walker(model, times, _Scripted(0.3, 0.5), True)
    env = simpy.Environment()
    env.process(walker.run(env))
    env.run()
    assert walker.values.tolist() == [[0.0], [2.0]] and walker.steps == 1 and env.now == t1
