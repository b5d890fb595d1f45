"""The compiled PCG64 (simcore.core.pcg64_kernels) against numpy's own: the same state from the
same seed, the same 64-bit outputs and the same standard exponentials, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.core import pcg64_kernels as P

EDGE_SEEDS = [0, 1, 2, 2**32 - 1, 2**32, 2**32 + 1, 2**62, 2**63 - 2]   # one and two 32-bit words


def _seeds(k: int) -> list[int]:
    return EDGE_SEEDS + [int(s) for s in np.random.default_rng(20261206).integers(0, 2**63 - 1, k)]


def _seeded(seed: int) -> np.ndarray:
    st = np.zeros(4, dtype=np.uint64)
    P.seed_state(seed, st)
    return st


def test_seeding_gives_numpys_state_and_increment():
    """``seed_state`` hashes the seed as ``SeedSequence`` does and seeds the LCG as PCG64 does:
    the 128-bit state and increment numpy reports, for seeds of one and of two 32-bit words."""
    for seed in _seeds(500):
        st = _seeded(seed)
        ref = np.random.PCG64(seed).state["state"]
        assert (int(st[0]) << 64 | int(st[1]), int(st[2]) << 64 | int(st[3])) == (ref["state"], ref["inc"]), seed


def test_outputs_are_numpys_64_bit_words():
    """``next64`` steps the LCG and applies XSL-RR: numpy's ``random_raw`` words, the rotation by
    zero included (a state whose top six bits are zero comes up within a few thousand words)."""
    for seed in _seeds(20):
        st = _seeded(seed)
        got = np.array([P.next64(st) for _ in range(3000)], dtype=np.uint64)
        assert (got == np.random.PCG64(seed).random_raw(3000)).all(), seed


def test_standard_exponentials_are_numpys_to_the_bit():
    """The ziggurat's fast path and its rare ones (the tail at index 0, the wedge test): two
    million draws over many seeds equal numpy's ``standard_exponential``, bit for bit."""
    draws = 0
    for seed in _seeds(192):
        st = _seeded(seed)
        out = np.empty(10_000)
        P.fill_exponential(st, out, 0, 5_000)
        P.fill_exponential(st, out, 5_000, 10_000)          # continued where the first call stopped
        ref = np.random.Generator(np.random.PCG64(seed)).standard_exponential(10_000)
        assert (out.view(np.uint64) == ref.view(np.uint64)).all(), seed
        draws += len(out)
    assert draws == 2_000_000


@pytest.mark.parametrize("a, b", [(2**64 - 1, 2**64 - 1), (2**63, 3), (0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321)])
def test_the_word_arithmetic_is_exact(a, b):
    """A 64 x 64-bit product in two words and a sum with its carry, at the words' limits."""
    hi, lo = P.mul64(np.uint64(a), np.uint64(b))
    assert (int(hi) << 64 | int(lo)) == a * b
    s, carry = P.add64(np.uint64(a), np.uint64(b))
    assert (int(carry) << 64 | int(s)) == a + b
