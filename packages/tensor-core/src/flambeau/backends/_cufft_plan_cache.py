"""cuFFT's plan caches, one per CUDA device (PyTorch's ``cufft_plan_cache``).

The caches live in CUDA code: their sizes come from the CUDA plugin's functions under
PyTorch's names (``_cufft_get_plan_cache_size(device_index)``,
``_cufft_get_plan_cache_max_size``, ``_cufft_set_plan_cache_max_size``,
``_cufft_clear_plan_cache``). Without them a cache raises RuntimeError, and without a
CUDA device there is no cache to index, as in PyTorch without CUDA.
"""

from __future__ import annotations

from flambeau.backends import _cuda_plugin

__all__ = ["cuFFTPlanCache", "cuFFTPlanCacheManager", "cufft_plan_cache"]


def _cache_function(name: str):
    function = _cuda_plugin.hook(name)
    if function is None:
        raise RuntimeError(
            "Cannot access cuFFT plan cache: it comes with a CUDA backend that provides "
            f"{name}: {_cuda_plugin.install_hint()}"
        )
    return function


class cuFFTPlanCache:
    """The cuFFT plan cache of CUDA device ``device_index``: ``size`` (the plans held,
    read-only), ``max_size`` (its capacity, settable) and ``clear()``. Without a CUDA
    plugin providing the cache, each raises RuntimeError.

    >>> cache = flambeau.backends.cuda.cuFFTPlanCache(0)
    >>> cache.device_index
    0
    >>> cache.size = 10
    Traceback (most recent call last):
      ...
    RuntimeError: .size is a read-only property showing the number of plans currently ...
    """

    def __init__(self, device_index: int):
        self.device_index = device_index

    @property
    def size(self) -> int:
        """The number of plans in the cache."""
        return _cache_function("_cufft_get_plan_cache_size")(self.device_index)

    @size.setter
    def size(self, value) -> None:
        raise RuntimeError(
            ".size is a read-only property showing the number of plans currently in the "
            "cache. To change the cache capacity, set cufft_plan_cache.max_size."
        )

    @property
    def max_size(self) -> int:
        """The number of plans the cache holds at most."""
        return _cache_function("_cufft_get_plan_cache_max_size")(self.device_index)

    @max_size.setter
    def max_size(self, value) -> None:
        _cache_function("_cufft_set_plan_cache_max_size")(self.device_index, value)

    def clear(self) -> None:
        """Drops every plan of the cache.

        >>> flambeau.backends.cuda.cuFFTPlanCache(0).clear()  # no CUDA plugin here
        Traceback (most recent call last):
          ...
        RuntimeError: Cannot access cuFFT plan cache: ...
        """
        return _cache_function("_cufft_clear_plan_cache")(self.device_index)


def _device_index(device) -> int:
    """The CUDA device index of ``device``: an int, ``"cuda:N"`` or a flambeau.device."""
    import flambeau

    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = flambeau.device(device)
    if isinstance(device, flambeau.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is not None:
            return device.index
    raise ValueError(
        f"Expected a torch.device with a specified index or an integer, but got:{device}"
    )


def _current_device() -> int:
    import flambeau

    if _cuda_plugin.plugin() is None:
        raise AssertionError(
            "cufft_plan_cache without an index means the current CUDA device, and no CUDA "
            f"backend is installed: {_cuda_plugin.install_hint()}"
        )
    return flambeau.cuda.current_device()


class cuFFTPlanCacheManager:
    """Every CUDA device's :class:`cuFFTPlanCache`: ``manager[device]`` is a device's
    (an index, ``"cuda:N"`` or a flambeau.device; RuntimeError outside the devices
    there are), and the manager's own ``size``, ``max_size`` and ``clear()`` are the
    current device's (AssertionError without CUDA, as in PyTorch).

    >>> cache = flambeau.backends.cuda.cufft_plan_cache
    >>> cache[0]  # no CUDA device here
    Traceback (most recent call last):
      ...
    RuntimeError: cufft_plan_cache: expected 0 <= device index < 0, but got device with index 0
    """

    def __init__(self):
        object.__setattr__(self, "caches", [])
        object.__setattr__(self, "_initialized", True)

    def __getitem__(self, device) -> cuFFTPlanCache:
        import flambeau

        index = _device_index(device)
        count = flambeau.cuda.device_count()
        if index < 0 or index >= count:
            raise RuntimeError(
                f"cufft_plan_cache: expected 0 <= device index < {count}, but got device "
                f"with index {index}"
            )
        if not self.caches:
            self.caches.extend(cuFFTPlanCache(i) for i in range(count))
        return self.caches[index]

    def __getattr__(self, name):  # size, max_size, clear: the current device's
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy, pickle and inspect probing for protocols
        return getattr(self[_current_device()], name)

    def __setattr__(self, name, value) -> None:
        setattr(self[_current_device()], name, value)


cufft_plan_cache = cuFFTPlanCacheManager()
