"""Seeding CUDA devices, as ``torch.cuda.manual_seed`` and friends.

Each device has a seed and an offset (the state of a counter-based Philox stream);
seeding needs no device and is applied whenever CUDA initializes. The CUDA random
kernels that will draw from these states are not written yet (README).
"""

from __future__ import annotations

import random as _py_random
import struct
import threading

import flambeau
from flambeau_cuda._devices import _get_device_index, current_device
from flambeau_cuda._init_state import device_count, is_initialized

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so unseeded programs agree
_lock = threading.Lock()
_states: dict[int, list[int]] = {}  # device index -> [seed, offset]


def _state(index: int) -> list[int]:
    return _states.setdefault(index, [_DEFAULT_SEED, 0])


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
    seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
    with _lock:
        _states[_index_or_zero(None)] = [seed, 0]


def manual_seed_all(seed) -> None:
    """Seeds the random numbers of every CUDA device.

    >>> import flambeau
    >>> flambeau.cuda.manual_seed_all(0)
    """
    seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
    with _lock:
        for index in range(max(device_count(), 1)):
            _states[index] = [seed, 0]


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
    with _lock:
        return _state(_index_or_zero(None))[0]


def get_rng_state(device="cuda") -> flambeau.Tensor:
    """The random state of a device as a uint8 tensor (seed and offset, 16 bytes).

    >>> import flambeau
    >>> flambeau.cuda.get_rng_state().dtype
    flambeau.uint8
    """
    with _lock:
        seed_value, offset = _state(_index_or_zero(device))
    return flambeau.tensor(list(struct.pack("<QQ", seed_value, offset)), dtype=flambeau.uint8)


def set_rng_state(new_state: flambeau.Tensor, device="cuda") -> None:
    """Restores a state that ``get_rng_state`` returned.

    >>> import flambeau
    >>> flambeau.cuda.set_rng_state(flambeau.cuda.get_rng_state())
    """
    data = bytes(int(b) for b in new_state.tolist())
    if len(data) != 16:
        raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {len(data)}")
    seed_value, offset = struct.unpack("<QQ", data)
    with _lock:
        _states[_index_or_zero(device)] = [seed_value, offset]


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
