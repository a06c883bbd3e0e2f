"""Attention Lab's seeded random numbers in Python, bit for bit: the xoshiro128** stream of
src/engine/rng.ts (`Rng`: splitmix32 seeding, `next`, `int`) and the per-step seed of
src/lab/data/seededHash.ts (`stepSeed`), so the PyTorch trainer draws exactly the batches
our engine draws for the same (seed, step). Every value is kept as an unsigned 32-bit
integer; JavaScript's `Math.imul`, `|0` and `>>>` become a multiply or shift masked to 32
bits, and `next()` divides by 2^32 in IEEE doubles as JavaScript does.

Pinned against the TypeScript by test/unit/lab/pytorch/sampler.test.ts.
Left out: `normal`, `split` and `shuffle` (the samplers do not use them).
"""

import math

M32 = 0xFFFFFFFF

# Random streams of a run (src/lab/data/dataset.ts STREAMS).
STREAMS = {"init": 1, "data": 2, "dropout": 3, "sample": 4, "diagnostic": 5}


def imul(a, b):
    """Math.imul on unsigned 32-bit patterns: the low 32 bits of the product."""
    return ((a & M32) * (b & M32)) & M32


def rotl(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


def splitmix32(state):
    s = (state + 0x9E3779B9) & M32
    z = imul(s ^ (s >> 16), 0x85EBCA6B)
    z = imul(z ^ (z >> 13), 0xC2B2AE35)
    return s, (z ^ (z >> 16)) & M32


class Rng:
    """A seeded xoshiro128** stream (Blackman & Vigna), as src/engine/rng.ts."""

    def __init__(self, seed):
        st = seed & M32
        out = []
        for _ in range(4):
            st, z = splitmix32(st)
            out.append(z)
        self.s = out
        if not any(self.s):
            self.s[0] = 1

    def next_u32(self):
        s0, s1, s2, s3 = self.s
        result = imul(rotl(imul(s1, 5), 7), 9)
        t = (s1 << 9) & M32
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 11)
        self.s = [s0, s1, s2, s3]
        return result

    def next(self):
        """Uniform in [0, 1) with 32 bits of resolution."""
        return self.next_u32() / 4294967296

    def int(self, n):
        """Uniform integer in [0, n): floor(next() * n), as JavaScript computes it."""
        return math.floor(self.next() * n)


def step_seed(seed, stream, step):
    """The seed of the random stream of one (run seed, stream, step): seededHash.ts stepSeed."""
    h = imul((seed & M32) ^ 0x9E3779B9, 0x85EBCA6B)
    h ^= imul((stream + 0x632BE5AB) & M32, 0xC2B2AE35)
    h = imul(h ^ (h >> 15), 0x2C1B3C6D) ^ imul((step & M32) ^ 0x7F4A7C15, 0x297A2D39)
    return (h ^ (h >> 13)) & M32


def step_rng(seed, stream, step):
    """dataset.ts stepRng: the same (seed, stream, step) always gives the same numbers."""
    return Rng(step_seed(seed, stream, step))
