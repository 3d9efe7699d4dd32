"""DLPack exchange in Python: ``to_dlpack`` (the legacy capsule export), ``from_dlpack``
(``flambeau.from_dlpack`` and ``flambeau.utils.dlpack.from_dlpack``) and ``DLDeviceType``.

The core's C++ (csrc/python/dlpack.cpp) exports a tensor (``Tensor.__dlpack__``) and wraps
a capsule (``_C.from_dlpack``); this module negotiates with a producer as PyTorch does:
which ``__dlpack__`` keywords it takes, and ``device`` / ``copy`` requests.
"""

from __future__ import annotations

import enum

from flambeau import _C
from flambeau._arg_checks import check_tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """The device types of the DLPack specification, as ``__dlpack_device__`` reports them
    (flambeau imports CPU and CUDA memory).

    >>> from flambeau.utils.dlpack import DLDeviceType
    >>> DLDeviceType(flambeau.ones(1).__dlpack_device__()[0])
    <DLDeviceType.kDLCPU: 1>
    """

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """A DLPack capsule ("dltensor") sharing ``tensor``'s memory, for ``from_dlpack`` of
    flambeau or another library; consume it once. The data is exported whether or not the
    tensor requires grad (the capsule carries no graph).

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> y = flambeau.from_dlpack(flambeau.to_dlpack(x))
    >>> y.data_ptr() == x.data_ptr()
    True
    """
    check_tensor("_to_dlpack", "data", 1, tensor)
    return tensor.detach().__dlpack__()


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of ``ext_tensor``: an object with ``__dlpack__`` (a NumPy
    array, another library's tensor) or a DLPack capsule, which is consumed. The producer's
    memory stays alive as long as the tensor does.

    ``device`` (a device or its name) places the result there: on the producer's device the
    producer is asked for it; elsewhere the tensor is copied over (``copy=False`` then
    raises ValueError). ``copy=True`` always copies, ``copy=False`` never does, None (the
    default) copies only when needed. A capsule takes neither (AssertionError).

    >>> import numpy as np
    >>> a = np.arange(3.0)
    >>> t = flambeau.from_dlpack(a)
    >>> a[1] = 10.0
    >>> t
    tensor([ 0., 10.,  2.], dtype=flambeau.float64)
    >>> c = flambeau.from_dlpack(a, copy=True)
    >>> a[0] = -1.0
    >>> c
    tensor([ 0., 10.,  2.], dtype=flambeau.float64)
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError(
                "device and copy kwargs not supported when ext_tensor is already a DLPack capsule."
            )
        return _C.from_dlpack(ext_tensor)
    kwargs = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    source = ext_tensor.__dlpack_device__()
    moves = False  # the result goes to another device than the producer's
    if device is not None:
        if isinstance(device, str):
            device = _C.device(device)
        if not isinstance(device, _C.device):
            raise AssertionError(f"from_dlpack: unsupported device type: {type(device)}")
        target = _dlpack_device(device)
        moves = tuple(source) != target
        if moves and copy is False:
            raise ValueError(
                f"cannot move DLPack tensor from device {source} to {target} without "
                "copying. Set copy=None or copy=True."
            )
        if not moves:
            kwargs["dl_device"] = target
    _check_importable(source[0])
    capsule, producer_copies = _capsule(ext_tensor, kwargs)
    tensor = _C.from_dlpack(capsule)
    if moves:
        return tensor.to(device)
    if copy is True and not producer_copies:
        return tensor.clone()
    return tensor


def _capsule(ext_tensor, kwargs: dict):
    """ext_tensor.__dlpack__(**kwargs), leaving out, one after the other, the keywords an
    older producer does not take (max_version, then copy, then dl_device); also whether the
    producer was given ``copy``."""
    for leave_out in ((), ("max_version",), ("copy",)):
        for name in leave_out:
            kwargs.pop(name, None)
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:
            continue
        if capsule is not None:
            return capsule, "copy" not in leave_out
    kwargs.pop("dl_device", None)
    return ext_tensor.__dlpack__(**kwargs), False


def _check_importable(device_type) -> None:
    """Before a capsule is asked for: CUDA memory needs the CUDA backend plugin (loaded now,
    or RuntimeError saying it is missing); memory elsewhere than the CPU and CUDA cannot be
    imported (RuntimeError)."""
    if device_type == DLDeviceType.kDLCUDA:
        from flambeau import backends

        backends.load("cuda")
    elif device_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        raise RuntimeError(
            "from_dlpack(): only CPU and CUDA memory can be imported (the object is on DLPack "
            f"device type {int(device_type)})"
        )


def _dlpack_device(device) -> tuple:
    """(DLPack device type, device id) of a flambeau device, as ``__dlpack_device__`` gives
    them; BufferError for a device DLPack cannot describe."""
    if device.type == "cpu":
        return (int(DLDeviceType.kDLCPU), 0)
    if device.type == "cuda":
        return (int(DLDeviceType.kDLCUDA), max(device.index or 0, 0))
    raise BufferError(f"Cannot pack tensors on {device.type}")
