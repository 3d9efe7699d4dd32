"""Top-level device API of PyTorch on a CPU-only install: flambeau.Stream and flambeau.Event
(synchronous CPU streams, events that cannot be recorded), flambeau.cpu, get_device_module,
the device exception classes, legacy_contiguous_format, to_dlpack, thread_safe_generator
and compiled_with_cxx11_abi."""

import subprocess
import sys

import numpy as np
import pytest

import flambeau as torch

NO_EVENTS = "cpu backend doesn't support events."


def test_cpu_stream_is_always_idle():
    s = torch.Stream("cpu")
    assert (s.device_type, s.device_index, s.stream_id) == ("cpu", -1, 0)
    assert s.device == torch.device("cpu")
    assert s.query() is True and s.synchronize() is None and s.is_capturing() is False
    assert repr(s) == "flambeau.Stream device_type=cpu, device_index=-1, stream_id=0"
    assert torch.Stream() == s  # no accelerator: the CPU's
    assert torch.Stream(torch.device("cpu"), priority=-1) == s
    assert hash(torch.Stream("cpu:0")) == hash(s) and s != 1
    with s as entered:
        assert entered is s
    assert s.wait_event(torch.Event()) is None
    with pytest.raises(RuntimeError, match=NO_EVENTS):
        s.wait_stream(torch.Stream())
    with pytest.raises(RuntimeError, match=NO_EVENTS):
        s.record_event()
    with pytest.raises(RuntimeError, match="native handle"):
        s.native_handle  # noqa: B018


def test_cpu_event_is_always_complete_and_cannot_be_recorded():
    e = torch.Event("cpu")
    assert e.device == torch.device("cpu") and e.event_id == 0
    assert e.query() is True and e.synchronize() is None and e.wait() is None
    assert repr(e) == "flambeau.Event device_type=cpu, device_index=-1, event_flag=0, event_id=0"
    assert "event_flag=1" in repr(torch.Event(enable_timing=True))
    with pytest.raises(RuntimeError, match=NO_EVENTS):
        e.record()
    with pytest.raises(RuntimeError, match=NO_EVENTS):
        e.record(torch.Stream())
    with pytest.raises(ValueError, match="enable_timing=True"):
        e.elapsed_time(torch.Event())
    timed = torch.Event(enable_timing=True)
    with pytest.raises(ValueError, match="must be recorded"):
        timed.elapsed_time(torch.Event(enable_timing=True))


def test_stream_and_event_argument_errors():
    with pytest.raises(TypeError, match="'device' \\(position 1\\) must be flambeau.device"):
        torch.Stream(1.5)
    with pytest.raises(TypeError, match="'priority' must be int"):
        torch.Stream("cpu", priority="a")
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        torch.Stream(0)
    with pytest.raises(RuntimeError, match="no backend for 'cuda' devices"):
        torch.Stream("cuda")
    with pytest.raises(RuntimeError, match="no backend for 'cuda' devices"):
        torch.Event("cuda")
    with pytest.raises(TypeError, match="expected a flambeau.Event"):
        torch.Stream().wait_event(1)
    with pytest.raises(TypeError, match="expected a flambeau.Stream"):
        torch.Event().record(1)


def test_flambeau_cpu_module():
    cpu = torch.cpu
    assert cpu.is_available() and cpu.is_initialized() and cpu.device_count() == 1
    assert cpu.current_device() == "cpu" and cpu.set_device("cpu") is None
    assert cpu.synchronize() is None
    default = cpu.current_stream()
    other = cpu.Stream()
    with cpu.stream(other):
        assert cpu.current_stream() is other
        with cpu.StreamContext(None):
            assert cpu.current_stream() is other
    assert cpu.current_stream() is default
    event = cpu.Event()
    assert event.query() and event.record() is None and event.wait() is None
    caps = cpu.get_capabilities()
    assert isinstance(caps["architecture"], str)
    with pytest.raises(TypeError):
        caps["avx2"] = True  # read-only
    for name in ("amp", "Stream", "Event", "get_capabilities"):
        assert name in cpu.__all__


def test_get_device_module():
    assert torch.get_device_module() is torch.cpu  # no accelerator
    assert torch.get_device_module("cpu") is torch.cpu
    assert torch.get_device_module(torch.device("cpu")) is torch.cpu
    assert torch.get_device_module("cuda:0") is torch.cuda
    with pytest.raises(RuntimeError, match="device string: foo"):
        torch.get_device_module("foo")  # not a device type flambeau knows
    with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding module"):
        torch.get_device_module("meta")  # a device type, without a module (as in PyTorch)
    with pytest.raises(RuntimeError, match="Invalid value of device '3'"):
        torch.get_device_module(3)


def test_exception_classes():
    assert torch.OutOfMemoryError is torch.cuda.OutOfMemoryError
    assert torch.AcceleratorError is torch.cuda.AcceleratorError
    for cls in (torch.OutOfMemoryError, torch.AcceleratorError):
        assert issubclass(cls, RuntimeError) and cls.__module__ == "flambeau"
        with pytest.raises(RuntimeError, match="boom"):
            raise cls("boom")


def test_legacy_contiguous_format():
    assert torch.legacy_contiguous_format is torch.contiguous_format
    x = torch.ones(2, 3).t()
    assert x.contiguous(memory_format=torch.legacy_contiguous_format).is_contiguous()


def test_to_dlpack_shares_memory_with_from_dlpack_and_numpy():
    x = torch.arange(6.0).reshape(2, 3)
    capsule = torch.to_dlpack(x)
    y = torch.from_dlpack(capsule)
    y[0, 0] = 10.0
    assert x[0, 0].item() == 10.0
    # A leaf that requires grad exports its data (the capsule carries no graph).
    leaf = torch.ones(3, requires_grad=True)
    z = torch.from_dlpack(torch.to_dlpack(leaf))
    assert not z.requires_grad and z.data_ptr() == leaf.data_ptr()
    np.testing.assert_array_equal(np.from_dlpack(z), [1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        torch.to_dlpack([1])


def test_from_dlpack_of_cuda_memory_needs_the_cuda_backend():
    class OnCuda:  # a producer in CUDA memory (CuPy, a torch CUDA tensor)
        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA

        def __dlpack__(self, **kwargs):
            raise AssertionError("no capsule is asked for without the backend")

    if "cuda" in {b.name for b in torch.backends.available()}:
        pytest.skip("a CUDA backend plugin is installed here")
    with pytest.raises(RuntimeError, match="no flambeau backend provides device type 'cuda'"):
        torch.from_dlpack(OnCuda())

    class OnOther(OnCuda):
        def __dlpack_device__(self):
            return (4, 0)  # kDLOpenCL

    with pytest.raises(RuntimeError, match="only CPU and CUDA memory can be imported"):
        torch.from_dlpack(OnOther())


def test_thread_safe_generator_is_none_outside_thread_workers():
    assert torch.thread_safe_generator() is None


def test_compiled_with_cxx11_abi_matches_the_binary():
    # The core's mangled C++ symbols name std::__cxx11 exactly when libstdc++'s new ABI was
    # used; `nm` reads them independently of the function's own scan.
    try:
        nm = subprocess.run(["nm", "-D", torch._C.__file__], capture_output=True, text=True)
    except OSError:
        pytest.skip("no nm to read the core's symbols")
    if nm.returncode != 0 or sys.platform != "linux":
        pytest.skip("nm cannot read the core's symbols")
    assert torch.compiled_with_cxx11_abi() is ("__cxx11" in nm.stdout)
