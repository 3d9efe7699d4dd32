"""Seeding and state of the default random generator.

Every sampler (rand, randn, randint, randperm, normal, Tensor.uniform_, ...)
draws from a counter-based Philox-4x32-10 stream keyed by the generator's seed.
A call reserves a run of counters starting at the generator's offset and
advances the offset past them; element i of the call (in row-major order)
reads lane i % 4 of counter (offset + i // 4) (two consecutive lanes for
64-bit draws). The numbers therefore depend only on the seed and the sequence
of calls, never on the number of threads. The state is the pair
(seed, offset), exchanged as a 16-byte uint8 tensor.
"""

from __future__ import annotations

from flambeau._C import Generator, default_generator

__all__ = ["Generator", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


def manual_seed(seed) -> Generator:
    """Seeds the default generator (any int in [-2**63, 2**64)); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the default generator from the OS's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed, Philox offset)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the default generator's state from get_rng_state()."""
    default_generator.set_state(new_state)
