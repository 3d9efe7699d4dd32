"""flambeau.accelerator: without a backend plugin (as PyTorch without an accelerator), and
with a stand-in plugin whose ABI entry points are faked, to check what goes where."""

import collections
import types

import pytest

import flambeau as F
from flambeau import _C, accelerator, backends

NONE = "Cannot access accelerator device when none is available."

NEEDS_A_DEVICE = [
    "current_device_index",
    "current_stream",
    "synchronize",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
    "Graph",
]


@pytest.fixture
def no_plugins(monkeypatch):
    monkeypatch.setattr(backends, "_entry_points", {})


def test_nothing_available_without_a_plugin(no_plugins):
    assert accelerator.is_available() is False
    assert accelerator.current_accelerator() is None
    assert accelerator.current_accelerator(check_available=True) is None
    assert accelerator.device_count() == 0


@pytest.mark.parametrize("name", NEEDS_A_DEVICE)
def test_device_functions_raise_without_a_plugin(no_plugins, name):
    with pytest.raises(RuntimeError, match=NONE):
        getattr(accelerator, name)()


def test_arguments_checked_as_pytorch_does(no_plugins):
    with pytest.warns(FutureWarning, match="current_device_index"), pytest.raises(RuntimeError):
        accelerator.current_device_idx()
    with pytest.raises(ValueError, match="but got:None"):
        accelerator.set_device_index(None)
    with pytest.raises(RuntimeError, match=NONE):
        accelerator.set_device_index(0)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match=NONE):
        accelerator.set_device_idx(0)
    with pytest.raises(RuntimeError, match="Accelerator expected"):
        accelerator.synchronize("cpu")
    with accelerator.device_index(None):  # None: nothing to switch, no device needed
        pass
    with pytest.raises(RuntimeError, match=NONE):
        with accelerator.device_index(0):
            pass


def test_every_public_name_exists():
    assert len(accelerator.__all__) == 23
    for name in accelerator.__all__:
        assert callable(getattr(accelerator, name))


class _FakeEntryPoint:
    def __init__(self, name, module):
        self.name, self._module, self.dist = name, module, None

    def load(self):
        return self._module


@pytest.fixture
def fake_plugin(monkeypatch):
    """A plugin for device type "cuda" with two devices, seen through faked ABI calls."""
    state = {"current": 0, "synced": [], "peak_reset": [], "emptied": [], "host": 0}
    module = types.ModuleType("fake_cuda")
    module.current_stream = lambda index: ("stream", index)
    module.mem_get_info = lambda index: (100 + index, 1000)
    module.get_device_capability = lambda index: {"supported_dtypes": {F.float32}}

    def empty_host_cache():
        state["host"] += 1

    module.empty_host_cache = empty_host_cache
    monkeypatch.setattr(backends, "_entry_points", {"cuda": _FakeEntryPoint("cuda", module)})
    monkeypatch.setattr(backends, "_modules", {})
    monkeypatch.setattr(backends, "_errors", {})
    monkeypatch.delenv(backends.ALLOW_ENV, raising=False)
    monkeypatch.delenv(backends.AUTOLOAD_ENV, raising=False)
    monkeypatch.setattr(_C, "_has_backend", lambda name: name == "cuda")
    monkeypatch.setattr(_C, "_device_count", lambda name: 2)

    def current(name):
        return state["current"]

    def set_device(name, index):
        state["current"] = index

    def stats(name, index):
        index = state["current"] if index == -1 else index
        return {
            "allocated_bytes": 10 + index,
            "reserved_bytes": 20,
            "peak_allocated_bytes": 30,
            "peak_reserved_bytes": 40,
            "allocations": 3,
        }

    monkeypatch.setattr(_C, "_current_device", current)
    monkeypatch.setattr(_C, "_set_device", set_device)
    monkeypatch.setattr(_C, "_synchronize", lambda name, i: state["synced"].append(i))
    monkeypatch.setattr(_C, "_memory_stats", stats)
    monkeypatch.setattr(_C, "_reset_peak_memory_stats", lambda n, i: state["peak_reset"].append(i))
    monkeypatch.setattr(_C, "_empty_cache", lambda n, i: state["emptied"].append(i))
    return state


def test_a_plugin_becomes_the_accelerator(fake_plugin):
    assert accelerator.is_available()
    assert accelerator.current_accelerator() == F.device("cuda")
    assert accelerator.device_count() == 2
    assert accelerator.current_device_index() == 0
    accelerator.set_device_index("cuda:1")
    assert accelerator.current_device_index() == 1
    with accelerator.device_index(0):
        assert accelerator.current_device_index() == 0
    assert accelerator.current_device_index() == 1


def test_plugin_calls_reach_the_abi_and_module(fake_plugin):
    accelerator.synchronize()
    accelerator.synchronize(0)
    accelerator.synchronize("cuda:1")
    assert fake_plugin["synced"] == [-1, 0, 1]
    stats = accelerator.memory_stats(1)
    assert isinstance(stats, collections.OrderedDict)
    assert stats["allocated_bytes.all.current"] == 11
    assert accelerator.memory_allocated(0) == 10
    assert accelerator.max_memory_allocated() == 30
    assert accelerator.memory_reserved() == 20
    assert accelerator.max_memory_reserved() == 40
    accelerator.reset_peak_memory_stats(1)
    accelerator.reset_accumulated_memory_stats(1)
    assert fake_plugin["peak_reset"] == [1]
    accelerator.empty_cache()
    assert fake_plugin["emptied"] == [-1]
    accelerator.empty_host_cache()
    assert fake_plugin["host"] == 1
    assert accelerator.current_stream(1) == ("stream", 1)
    assert accelerator.get_memory_info(1) == (101, 1000)
    assert accelerator.get_device_capability() == {"supported_dtypes": {F.float32}}
    # What the plugin's module does not offer is a clear RuntimeError.
    with pytest.raises(RuntimeError, match="does not provide Graph"):
        accelerator.Graph()
    with pytest.raises(RuntimeError, match="Accelerator expected"):
        accelerator.memory_stats("cpu")


def test_a_plugin_that_fails_to_load_is_passed_over(monkeypatch):
    class Broken(_FakeEntryPoint):
        def load(self):
            raise ImportError("no driver")

    monkeypatch.setattr(backends, "_entry_points", {"cuda": Broken("cuda", None)})
    monkeypatch.setattr(backends, "_modules", {})
    monkeypatch.setattr(backends, "_errors", {})
    monkeypatch.delenv(backends.ALLOW_ENV, raising=False)
    monkeypatch.delenv(backends.AUTOLOAD_ENV, raising=False)
    with pytest.warns(RuntimeWarning, match="no driver"):
        assert accelerator.current_accelerator() is None
    with pytest.warns(RuntimeWarning):
        assert accelerator.device_count() == 0
