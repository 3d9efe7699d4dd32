"""Seeding CUDA devices, as ``torch.cuda.manual_seed`` and friends.

Each device has its own default generator, kept by the core
(``flambeau.Generator._default_for(device)``): a counter-based Philox stream that the
CUDA random kernels draw from when no generator is given, as the CPU's kernels draw
from ``flambeau.default_generator``. ``flambeau.manual_seed`` seeds them all; seeding
needs no device.
"""

from __future__ import annotations

import random as _py_random

import flambeau
from flambeau_cuda._devices import _get_device_index, current_device
from flambeau_cuda._init_state import device_count, is_initialized


def _generator(device=None) -> flambeau.Generator:
    """The default generator of a CUDA device (None: the current one)."""
    return flambeau.Generator._default_for(flambeau.device("cuda", _index_or_zero(device)))


def _index_or_zero(device) -> int:
    """The device's index; for "the current device" before initialization, 0 (the
    device that will be current), so that seeding needs no driver."""
    if isinstance(device, str):
        device = flambeau.device(device)
    if device is None or (isinstance(device, flambeau.device) and device.index is None):
        return current_device() if is_initialized() else 0
    return _get_device_index(device)


def manual_seed(seed) -> None:
    """Seeds the random numbers of the current CUDA device.

    >>> import flambeau
    >>> flambeau.cuda.manual_seed(0)
    """
    _generator().manual_seed(int(seed))


def manual_seed_all(seed) -> None:
    """Seeds the random numbers of every CUDA device.

    >>> import flambeau
    >>> flambeau.cuda.manual_seed_all(0)
    """
    for index in range(max(device_count(), 1)):
        _generator(index).manual_seed(int(seed))


def seed() -> None:
    """Seeds the current CUDA device with a random number.

    >>> import flambeau
    >>> flambeau.cuda.seed()
    """
    manual_seed(_py_random.getrandbits(63))


def seed_all() -> None:
    """Seeds every CUDA device with one random number.

    >>> import flambeau
    >>> flambeau.cuda.seed_all()
    """
    manual_seed_all(_py_random.getrandbits(63))


def initial_seed() -> int:
    """The seed of the current CUDA device.

    >>> import flambeau
    >>> flambeau.cuda.manual_seed(7)
    >>> flambeau.cuda.initial_seed()
    7
    """
    return _generator().initial_seed()


def get_rng_state(device="cuda") -> flambeau.Tensor:
    """The random state of a device's default generator, as a uint8 tensor.

    >>> import flambeau
    >>> flambeau.cuda.get_rng_state().dtype
    flambeau.uint8
    """
    return _generator(device).get_state()


def set_rng_state(new_state: flambeau.Tensor, device="cuda") -> None:
    """Restores a state that ``get_rng_state`` returned.

    >>> import flambeau
    >>> flambeau.cuda.set_rng_state(flambeau.cuda.get_rng_state())
    """
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list:
    """The random states of every device.

    >>> import flambeau
    >>> isinstance(flambeau.cuda.get_rng_state_all(), list)
    True
    """
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restores the states ``get_rng_state_all`` returned, device by device.

    >>> import flambeau
    >>> flambeau.cuda.set_rng_state_all(flambeau.cuda.get_rng_state_all())
    """
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
