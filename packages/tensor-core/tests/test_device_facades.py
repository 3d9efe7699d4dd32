"""flambeau.xpu, flambeau.mps, flambeau.mtia (and flambeau.cuda's shared parts): without a
backend plugin they answer as PyTorch's modules do on a machine without the device; with
one, every attribute is the plugin's."""

from __future__ import annotations

import collections
import importlib
import types

import pytest

import flambeau
from flambeau import backends

DEVICES = ["cuda", "xpu", "mps", "mtia"]


@pytest.fixture
def no_plugins(monkeypatch):
    monkeypatch.setattr(backends, "_entry_points", {})


@pytest.mark.parametrize("device", DEVICES)
def test_lazy_submodule_with_nothing_available(no_plugins, device):
    module = getattr(flambeau, device)
    assert module is importlib.import_module(f"flambeau.{device}")
    assert module.is_available() is False
    assert module.device_count() == 0


@pytest.mark.parametrize("device", DEVICES)
def test_seeding_needs_no_device_and_leaves_the_cpu_generator_alone(no_plugins, device):
    module = getattr(flambeau, device)
    state = flambeau.get_rng_state()
    assert module.manual_seed(123) is None
    if device != "mps":  # PyTorch's MPS module has no manual_seed_all
        assert module.manual_seed_all(7) is None
    assert flambeau.equal(flambeau.get_rng_state(), state)


@pytest.mark.parametrize("device", ["cuda", "xpu", "mtia"])
def test_seeds_are_converted_before_being_dropped(no_plugins, device):
    module = getattr(flambeau, device)
    for seed in ("x", None):
        with pytest.raises((ValueError, TypeError)):
            module.manual_seed(seed)
        with pytest.raises((ValueError, TypeError)):
            module.manual_seed_all(seed)
    assert module.manual_seed("12") is None  # int("12") is fine, as in PyTorch
    assert module.seed() is None and module.seed_all() is None


@pytest.mark.parametrize("device", ["cuda", "xpu"])
def test_cuda_like_answers(no_plugins, device):
    module = getattr(flambeau, device)
    assert module.empty_cache() is None
    assert module.is_initialized() is False
    assert module.is_bf16_supported() is False and module.is_tf32_supported() is False
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved"):
        assert getattr(module, name)() == 0 and getattr(module, name)(0) == 0
    assert module.max_memory_reserved() == 0
    assert module.memory_stats() == collections.OrderedDict()
    assert module.get_arch_list() == [] and module.get_rng_state_all() == []
    assert module.set_rng_state(flambeau.zeros(1, dtype=flambeau.uint8)) is None
    assert module.set_rng_state_all([]) is None
    # The stand-ins are fresh values: a caller appending to one changes no other answer.
    module.get_arch_list().append("sm_90")
    assert module.get_arch_list() == []
    with pytest.raises(TypeError):
        module.empty_cache(0)  # signatures are PyTorch's


XPU_REFUSED = [
    "current_device",
    "current_stream",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "init",
    "initial_seed",
    "synchronize",
]


@pytest.mark.parametrize("name", XPU_REFUSED)
def test_xpu_calls_that_need_the_device_assert_as_pytorch(no_plugins, name):
    with pytest.raises(AssertionError, match=rf"flambeau\.xpu\.{name}\(\) needs an XPU device"):
        getattr(flambeau.xpu, name)()
    with pytest.raises(AssertionError, match="'xpu' entry point of group 'flambeau.backends'"):
        flambeau.xpu.set_device(0)


CUDA_REFUSED = [*XPU_REFUSED, "default_stream", "mem_get_info", "ipc_collect"]


@pytest.mark.parametrize("name", CUDA_REFUSED)
def test_cuda_calls_that_need_the_device_assert_as_pytorch(no_plugins, name):
    with pytest.raises(AssertionError, match=rf"flambeau\.cuda\.{name}\(\) needs a CUDA device"):
        getattr(flambeau.cuda, name)()


def test_cuda_names_exist_without_a_backend_as_in_pytorchs_cpu_build(no_plugins):
    cuda = flambeau.cuda
    # Classes exist (isinstance checks work) and refuse construction.
    for name in ("Stream", "Event", "ExternalStream", "CUDAGraph"):
        cls = getattr(cuda, name)
        assert isinstance(cls, type) and not isinstance(object(), cls)
        with pytest.raises(RuntimeError, match=f"flambeau.cuda.{name} requires CUDA support"):
            cls()
    # Contexts naming no device change nothing; naming one raises on entry.
    with cuda.device(None), cuda.device(-1), cuda.stream(None), cuda.device_of(flambeau.ones(1)):
        pass
    guard = cuda.device(0)
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        guard.__enter__()
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device("cpu")
    assert cuda.set_device(-1) is None and cuda.set_stream(None) is None
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        cuda.set_device("cuda:0")
    # Counters and reports say no memory is in use.
    assert cuda.reset_peak_memory_stats() is None and cuda.memory_snapshot() == []
    assert cuda.is_current_stream_capturing() is False and cuda.get_gencode_flags() == ""
    assert "No CUDA memory" in cuda.memory_summary()
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        cuda.nvtx.range_push("step")
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        with cuda.nvtx.range("step {}", 1):
            pass


def test_mps_answers_as_pytorch_without_mps(no_plugins):
    assert flambeau.mps.manual_seed("anything") is None  # not even converted
    for name in ("seed", "empty_cache", "synchronize", "get_rng_state", "current_allocated_memory"):
        with pytest.raises(RuntimeError, match="needs an MPS device"):
            getattr(flambeau.mps, name)()
    with pytest.raises(RuntimeError):
        flambeau.mps.set_per_process_memory_fraction(0.5)
    with pytest.raises(AttributeError, match="needs an MPS backend"):
        flambeau.mps.manual_seed_all  # noqa: B018 - PyTorch's mps module has none either


def test_mtia_answers_as_pytorch_without_mtia(no_plugins):
    mtia = flambeau.mtia
    assert mtia.is_initialized() is False
    assert mtia.memory_allocated() == 0 == mtia.max_memory_allocated()
    assert mtia.memory_stats() == {} and mtia.reset_peak_memory_stats() is None
    assert mtia.get_rng_state_all() == [] and mtia.set_rng_state_all([]) is None
    assert mtia.is_bf16_supported() is True  # PyTorch's answer, which asks no device
    for name in ("get_rng_state", "init", "initial_seed"):
        with pytest.raises(AssertionError, match="MTIA"):
            getattr(mtia, name)()
    for name in ("empty_cache", "synchronize", "current_device", "default_stream"):
        with pytest.raises(RuntimeError, match="MTIA"):
            getattr(mtia, name)()
    with pytest.raises(AttributeError, match="needs an MTIA backend"):
        mtia.memory_reserved  # noqa: B018 - not in PyTorch's mtia module


@pytest.mark.parametrize("device", ["xpu", "mps", "mtia"])
def test_other_names_say_which_plugin_to_install(no_plugins, device):
    module = getattr(flambeau, device)
    with pytest.raises(AttributeError, match=f"'{device}' entry point of group"):
        module.Stream  # noqa: B018
    assert not hasattr(module, "__wrapped__")  # dunder lookups stay plain AttributeErrors


class _FakeEntryPoint:
    def __init__(self, name, module):
        self.name, self._module, self.dist = name, module, None

    def load(self):
        return self._module


@pytest.mark.parametrize("device", DEVICES)
def test_a_plugin_provides_everything(monkeypatch, device):
    plugin = types.ModuleType(f"fake_{device}")
    plugin.is_available = lambda: True
    plugin.device_count = lambda: 3
    plugin.empty_cache = lambda: "plugin's"
    plugin.Stream = object
    monkeypatch.setattr(backends, "_entry_points", {device: _FakeEntryPoint(device, plugin)})
    monkeypatch.setattr(backends, "_modules", {device: plugin})
    monkeypatch.setattr(backends, "_errors", {})
    module = getattr(flambeau, device)
    assert module.is_available() is True and module.device_count() == 3
    assert module.empty_cache() == "plugin's"  # not the stand-in
    assert module.Stream is object
    with pytest.raises(AttributeError):
        module.no_such_function  # noqa: B018


def test_a_plugin_that_fails_to_load_is_not_available(monkeypatch):
    monkeypatch.setattr(backends, "_entry_points", {"xpu": _FakeEntryPoint("xpu", None)})
    monkeypatch.setattr(backends, "_modules", {})
    monkeypatch.setattr(backends, "_errors", {"xpu": ImportError("broken driver")})
    with pytest.warns(RuntimeWarning, match="XPU backend unavailable"):
        assert flambeau.xpu.is_available() is False
    with pytest.warns(RuntimeWarning):
        assert flambeau.xpu.device_count() == 0
