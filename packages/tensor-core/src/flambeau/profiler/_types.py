"""The profiler's enumerations, which PyTorch exposes in torch.profiler and torch.autograd."""

from __future__ import annotations

import enum

__all__ = ["DeviceType", "ProfilerActivity", "ProfilerState", "kineto_available"]


def kineto_available() -> bool:
    """True: the profiler that PyTorch builds on Kineto (``flambeau.profiler.profile``) is
    available; flambeau's own recorder stands in for Kineto and records CPU activity.

    >>> flambeau.profiler.kineto_available()
    True
    """
    return True


class DeviceType(enum.IntEnum):
    """Device types, numbered as in PyTorch (c10::DeviceType).

    >>> flambeau.profiler.DeviceType.CUDA
    <DeviceType.CUDA: 1>
    """

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerActivity(enum.IntEnum):
    """What a profiler would record.

    >>> [a.name for a in flambeau.profiler.ProfilerActivity][:3]
    ['CPU', 'XPU', 'CUDA']
    """

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerState(enum.IntEnum):
    """The profiler's modes.

    >>> from flambeau.profiler._types import ProfilerState
    >>> ProfilerState.Disabled
    <ProfilerState.Disabled: 0>
    """

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9
