"""numpy's PCG64 generator and its standard exponential, compiled: the draws of
``numpy.random.Generator(numpy.random.PCG64(seed)).standard_exponential(n)``, bit for bit, for a
model that seeds a generator per entity (a NUMA task) and cannot afford numpy's 15 µs to build one.

- ``seed_state``: ``numpy.random.SeedSequence(seed)`` hashed into its pool of four 32-bit words,
  four 64-bit words generated from it, and PCG64 seeded with them (state, increment).
- ``next64``: one step of the 128-bit LCG and its XSL-RR output (numpy's default PCG64).
- ``standard_exponential``: numpy's ziggurat (``random_standard_exponential``), with the tables
  numba ships for its own Generator support.

Integers are unsigned 64-bit; every product and sum is split so that none overflows (the
functions give the same bits as Python with the compiler off). tests/test_pcg64_kernels.py
checks them against numpy over many seeds and draws.
"""

from __future__ import annotations

import math

import numpy as np
from numba.np.random._constants import fe_double, ke_double, we_double, ziggurat_exp_r

from simcore.core.jit import jit_module  # numba's jit, cached by the kernel files' sources

U = np.uint64
M32, S32, S16, ONE, ZERO = U(0xFFFFFFFF), U(32), U(16), U(1), U(0)
# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
INIT_A, MULT_A, INIT_B, MULT_B = U(0x43B0D7E5), U(0x931E8875), U(0x8B51F9DD), U(0x58F38DED)
MIX_MULT_L, MIX_MULT_R = U(0xCA01F9DD), U(0x4973F715)
POOL = 4
# PCG's 128-bit multiplier, high and low words
MUL_HI, MUL_LO = U(2549297995355413924), U(4865540595714422341)
SHIFT_ROT, S11, S3, S8, LOW8, S64 = U(58), U(11), U(3), U(8), U(0xFF), U(64)
DOUBLE_UNIT = 1.0 / 9007199254740992.0
KE, WE, FE, EXP_R = ke_double, we_double, fe_double, ziggurat_exp_r


def mul64(a, b):
    """The 128-bit product of two 64-bit words, as (high, low)."""
    a0, a1, b0, b1 = a & M32, a >> S32, b & M32, b >> S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> S32) + (p01 & M32) + (p10 & M32)
    return p11 + (p01 >> S32) + (p10 >> S32) + (mid >> S32), (p00 & M32) | ((mid & M32) << S32)


def add64(a, b):
    """(a + b) mod 2**64 and its carry."""
    lo = (a & M32) + (b & M32)
    hi = (a >> S32) + (b >> S32) + (lo >> S32)
    return ((hi & M32) << S32) | (lo & M32), hi >> S32


def _step(st):
    """One LCG step on ``st`` = [state high, state low, increment high, increment low]:
    state = state * multiplier + increment, mod 2**128."""
    hi, lo = mul64(st[1], MUL_LO)
    hi = add64(add64(hi, mul64(st[1], MUL_HI)[1])[0], mul64(st[0], MUL_LO)[1])[0]
    lo, carry = add64(lo, st[3])
    st[0] = add64(add64(hi, st[2])[0], carry)[0]
    st[1] = lo


def next64(st):
    """The generator's next 64-bit output (step, then XSL-RR)."""
    _step(st)
    x = st[0] ^ st[1]
    rot = st[0] >> SHIFT_ROT
    if rot == ZERO:
        return x
    return (x >> rot) | ((x & ((ONE << rot) - ONE)) << (S64 - rot))


def next_double(st):
    """A double uniform on [0, 1) from the next output's top 53 bits."""
    return float(next64(st) >> S11) * DOUBLE_UNIT


def _hashmix(value, h):
    """SeedSequence's hashmix: (the mixed value, the next hash constant)."""
    value = value ^ h
    h = (h * MULT_A) & M32
    value = (value * h) & M32
    return value ^ (value >> S16), h


def _mix(x, y):
    """SeedSequence's mix of two 32-bit words."""
    r = (((MIX_MULT_L * x) & M32) + (M32 + ONE) - ((MIX_MULT_R * y) & M32)) & M32
    return r ^ (r >> S16)


def seed_state(seed, st):
    """``st`` set to the state of ``numpy.random.PCG64(seed)`` for an integer 0 <= seed < 2**64."""
    seed = U(seed)
    words = np.zeros(POOL, dtype=np.uint64)
    words[0], words[1] = seed & M32, seed >> S32
    nwords = 2 if words[1] != ZERO else 1          # the seed as little-endian 32-bit words
    pool = np.zeros(POOL, dtype=np.uint64)
    h = INIT_A
    for i in range(POOL):
        pool[i], h = _hashmix(words[i] if i < nwords else ZERO, h)
    for src in range(POOL):
        for dst in range(POOL):
            if src != dst:
                mixed, h = _hashmix(pool[src], h)
                pool[dst] = _mix(pool[dst], mixed)
    out = np.zeros(2 * POOL, dtype=np.uint64)
    h = INIT_B
    for i in range(2 * POOL):
        v = pool[i % POOL] ^ h
        h = (h * MULT_B) & M32
        v = (v * h) & M32
        out[i] = v ^ (v >> S16)
    # four 64-bit words (little-endian pairs): state high, state low, increment high, increment low
    init_hi, init_lo = out[0] | (out[1] << S32), out[2] | (out[3] << S32)
    seq_hi, seq_lo = out[4] | (out[5] << S32), out[6] | (out[7] << S32)
    st[0], st[1] = ZERO, ZERO
    st[2] = (seq_hi << ONE) | (seq_lo >> U(63))           # increment = (sequence << 1) | 1
    st[3] = (seq_lo << ONE) | ONE
    _step(st)
    lo, carry = add64(st[1], init_lo)
    st[0] = add64(add64(st[0], init_hi)[0], carry)[0]
    st[1] = lo
    _step(st)


def standard_exponential(st):
    """One standard exponential draw (numpy's ziggurat)."""
    while True:
        ri = next64(st) >> S3
        idx = ri & LOW8
        ri = ri >> S8
        x = float(ri) * WE[idx]
        if ri < KE[idx]:
            return x
        if idx == ZERO:
            return EXP_R - math.log1p(-next_double(st))
        if (FE[idx - ONE] - FE[idx]) * next_double(st) + FE[idx] < math.exp(-x):
            return x


def fill_exponential(st, out, start, stop):
    """``out[start:stop]`` filled with the generator's next standard exponentials, in order."""
    for i in range(start, stop):
        out[i] = standard_exponential(st)


jit_module(globals(), nopython=True, cache=True)
