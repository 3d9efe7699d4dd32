"""flambeau.utils.dlpack (torch.utils.dlpack): DLDeviceType, and from_dlpack's device and
copy requests, negotiated with producers old and new (flambeau.from_dlpack is the same
function)."""

import numpy as np
import pytest

import flambeau
from flambeau.utils import dlpack
from flambeau.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack


def test_namespace():
    assert dlpack.__all__ == ["DLDeviceType", "from_dlpack"]
    assert from_dlpack is flambeau.from_dlpack and to_dlpack is flambeau.to_dlpack
    assert flambeau.utils.dlpack is dlpack


def test_device_types_are_the_specification_s():
    expected = {
        "kDLCPU": 1, "kDLCUDA": 2, "kDLCUDAHost": 3, "kDLOpenCL": 4, "kDLVulkan": 7,
        "kDLMetal": 8, "kDLVPI": 9, "kDLROCM": 10, "kDLROCMHost": 11, "kDLExtDev": 12,
        "kDLCUDAManaged": 13, "kDLOneAPI": 14, "kDLWebGPU": 15, "kDLHexagon": 16,
        "kDLMAIA": 17,
    }  # fmt: skip
    assert {m.name: m.value for m in DLDeviceType} == expected
    assert DLDeviceType.kDLCPU == 1 and isinstance(DLDeviceType.kDLCUDA, int)
    assert flambeau.ones(1).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


def test_shares_memory_unless_a_copy_is_asked_for():
    a = np.arange(3.0)
    for copy in (None, False):
        t = from_dlpack(a, copy=copy)
        assert t.data_ptr() == a.ctypes.data
    c = from_dlpack(a, copy=True)
    assert c.data_ptr() != a.ctypes.data and c.tolist() == [0.0, 1.0, 2.0]
    src = flambeau.tensor([1, 2, 3])
    assert from_dlpack(src).data_ptr() == src.data_ptr()
    assert from_dlpack(src, copy=True).data_ptr() != src.data_ptr()


def test_device_on_the_producer_s_device_is_passed_to_it():
    seen = []

    class Producer:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kwargs):
            seen.append(kwargs)
            return self.arr.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    a = np.arange(4, dtype=np.int64)
    for device in ("cpu", flambeau.device("cpu")):
        t = from_dlpack(Producer(a), device=device)
        assert t.data_ptr() == a.ctypes.data
    assert seen == [{"max_version": (1, 0), "dl_device": (1, 0)}] * 2


def test_producers_without_the_newer_keywords():
    class NoCopy:  # a producer from before DLPack 1.0 that takes only a stream
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, stream=None):
            return self.arr.__dlpack__()

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    a = np.arange(3, dtype=np.float32)
    shared = from_dlpack(NoCopy(a), device="cpu")
    assert shared.data_ptr() == a.ctypes.data
    copied = from_dlpack(NoCopy(a), copy=True)  # the producer could not copy: flambeau does
    assert copied.data_ptr() != a.ctypes.data and copied.tolist() == [0.0, 1.0, 2.0]


def test_errors():
    t = flambeau.arange(3)
    with pytest.raises(AssertionError, match="unsupported device type: <class 'int'>"):
        from_dlpack(t, device=0)
    with pytest.raises(ValueError, match=r"cannot move DLPack tensor from device \(1, 0\) to "
                       r"\(2, 0\) without copying\. Set copy=None or copy=True\."):  # fmt: skip
        from_dlpack(t, device="cuda", copy=False)
    capsule = to_dlpack(t)
    with pytest.raises(AssertionError, match="already a DLPack capsule"):
        from_dlpack(capsule, copy=True)
    with pytest.raises(AssertionError, match="already a DLPack capsule"):
        from_dlpack(capsule, device="cpu")
    assert from_dlpack(capsule).tolist() == [0, 1, 2]  # the capsule was not consumed


def test_to_dlpack_exports_a_tensor_that_requires_grad():
    x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    y = from_dlpack(to_dlpack(x))
    assert y.data_ptr() == x.data_ptr() and not y.requires_grad
    with pytest.raises(TypeError):
        to_dlpack([1.0])
