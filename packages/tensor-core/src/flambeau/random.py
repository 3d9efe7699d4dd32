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

import contextlib
import warnings

from flambeau._C import Generator, default_generator

__all__ = [
    "Generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
    "thread_safe_generator",
]


def manual_seed(seed) -> Generator:
    """Seeds the default generator (any int in [-2**63, 2**64)), and every device's
    default generator with it, as torch.manual_seed seeds the CUDA devices; returns the
    CPU's.

    >>> g = flambeau.random.manual_seed(42)
    >>> g.initial_seed()
    42
    >>> flambeau.rand(2)
    tensor([0.6130, 0.4686])
    """
    g = default_generator.manual_seed(seed)
    Generator._seed_devices(g.initial_seed())
    return g


def seed() -> int:
    """Seeds the default generator from the OS's entropy; returns the seed.

    >>> s = flambeau.random.seed()
    >>> s == flambeau.random.initial_seed()
    True
    """
    s = default_generator.seed()
    Generator._seed_devices(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    >>> _ = flambeau.manual_seed(7)
    >>> flambeau.random.initial_seed()
    7
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed, Philox offset).

    >>> _ = flambeau.manual_seed(42)
    >>> state = flambeau.random.get_rng_state()
    >>> state.dtype, state.shape
    (flambeau.uint8, flambeau.Size([16]))
    """
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the default generator's state from get_rng_state().

    >>> state = flambeau.random.get_rng_state()
    >>> a = flambeau.rand(3)
    >>> flambeau.random.set_rng_state(state)
    >>> flambeau.equal(flambeau.rand(3), a)
    True
    """
    default_generator.set_state(new_state)


_fork_rng_warned = False


def _device_rng_module(device_type: str):
    """The plugin module for ``device_type`` if it keeps random state of its own (it then
    offers get_rng_state(device) and set_rng_state(state, device)); None otherwise."""
    from flambeau import backends

    if device_type not in backends._installed():
        return None
    module = backends.module(device_type)
    if module is None or not hasattr(module, "get_rng_state"):
        return None
    return module


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
):
    """Restores the random state on exit from the ``with`` block to what it was on entry.

    The default generator's state is always forked: it is the stream every device draws
    from, plugin devices included, unless a backend plugin keeps its own per-device state
    (its module then offers ``get_rng_state(device)``), which is forked too for
    ``devices`` (default: all of them, with a warning when there are several).
    ``device_type`` defaults to the accelerator's type (see flambeau.accelerator), or
    "cuda". ``enabled=False`` forks nothing.

    >>> state = flambeau.random.get_rng_state()
    >>> with flambeau.random.fork_rng():
    ...     _ = flambeau.rand(3)
    >>> flambeau.equal(flambeau.random.get_rng_state(), state)
    True
    """
    global _fork_rng_warned
    if device_type == "meta" or not enabled:
        yield
        return
    if device_type is None:
        from flambeau import accelerator

        current = accelerator.current_accelerator()
        device_type = current.type if current is not None else "cuda"
    module = _device_rng_module(device_type)
    if devices is None:
        from flambeau import accelerator

        count = accelerator._device_count_of(device_type) if module is not None else 0
        if count > 1 and not _fork_rng_warned:
            warnings.warn(
                f"{device_type.upper()} reports that you have {count} available devices, and "
                f"you have used {_caller} without explicitly specifying which devices are "
                f"being used; every one is forked. Pass the '{_devices_kw}' keyword argument "
                "with the devices you use to fork only those.",
                stacklevel=3,
            )
            _fork_rng_warned = True
        devices = list(range(count))
    else:
        devices = list(devices)  # an iterator would be exhausted by the first pass
        if devices and module is None and not _shares_default_generator(device_type):
            raise RuntimeError(
                f"fork_rng: no backend provides device type {device_type!r}, so the random "
                f"state of its devices {devices} cannot be forked"
            )
    cpu_state = get_rng_state()
    device_states = [module.get_rng_state(d) for d in devices] if module is not None else []
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            module.set_rng_state(state, d)


def _shares_default_generator(device_type: str) -> bool:
    """Whether ``device_type`` is the CPU or a plugin drawing from the default generator."""
    from flambeau import backends

    return device_type == "cpu" or device_type in backends._installed()


def thread_safe_generator() -> Generator | None:
    """In a DataLoader worker thread, that worker's own generator; None everywhere else
    (the default generator is then used), and None when flambeau's data package, which
    provides DataLoader, is not installed.

    >>> flambeau.random.thread_safe_generator() is None  # not in a DataLoader worker
    True
    """
    try:
        from flambeau.utils.data import get_worker_info
    except ImportError:
        return None
    info = get_worker_info()
    if info is None or getattr(info, "worker_method", None) != "thread":
        return None
    return getattr(info, "rng", None)
