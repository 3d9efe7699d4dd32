"""The allocator is tested through ``_allocator_harness`` (tests/harness/): the C++
caching allocator over the fakecuda device, built once per test session into a
temporary directory (or into $FLAMBEAU_ALLOCATOR_HARNESS_DIR, reused there while
newer than the sources). Without a C++ compiler, Python headers or pybind11
every test here is skipped, with the reason."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
sys.path.insert(1, str(Path(__file__).resolve().parent))  # plugin_build
import build as harness_build  # noqa: E402
import plugin_build  # noqa: E402

MiB = 1 << 20


@pytest.fixture(scope="session")
def install_dir(tmp_path_factory):
    """The plugin built and installed once per session (plugin_build.py), for the tests
    that import it in a fresh interpreter with this directory on sys.path."""
    target = tmp_path_factory.mktemp("flambeau_cuda_install")
    try:
        seconds = plugin_build.build(target)
    except plugin_build.BuildUnavailable as e:
        pytest.skip(f"cannot build flambeau-tensor-cuda here: {e}")
    print(f"flambeau-tensor-cuda built in {seconds:.0f} s")
    return target


@pytest.fixture(scope="session")
def harness(tmp_path_factory):
    """The compiled ``_allocator_harness`` module."""
    out = os.environ.get("FLAMBEAU_ALLOCATOR_HARNESS_DIR") or tmp_path_factory.mktemp(
        "allocator_harness"
    )
    try:
        path = harness_build.build(out)
    except harness_build.BuildUnavailable as e:
        pytest.skip(f"cannot build the allocator harness: {e}")
    spec = importlib.util.spec_from_file_location(harness_build.MODULE, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def make(harness, monkeypatch):
    """make(conf="", **fake_options) -> (fake device, allocator). The environment
    variable is cleared so that only `conf` applies."""
    monkeypatch.delenv(harness.CONF_ENV, raising=False)

    def factory(conf: str | None = "", **fake_options):
        fake_options.setdefault("total_bytes", 256 * MiB)
        fake = harness.FakeDevice(**fake_options)
        return fake, harness.CachingAllocator(fake, conf)

    return factory


@pytest.fixture
def legacy(make):
    """A 256 MiB device with expandable segments off: one malloc per segment."""
    return make("expandable_segments:False")


@pytest.fixture
def expandable(make):
    """A 256 MiB device with 2 MiB pages mapped on demand."""
    return make("")
