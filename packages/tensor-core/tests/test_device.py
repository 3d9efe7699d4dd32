"""Devices and the backend plugin mechanism, with the core alone (no plugin installed).

The plugin side (a real backend built against the ABI header) is
tests-integration/test_backends.py.
"""

import os
import subprocess
import sys

import pytest

import flambeau
from flambeau import backends


def test_device_parsing_follows_pytorch():
    d = flambeau.device("cuda:1")
    assert (d.type, d.index, str(d), repr(d)) == (
        "cuda",
        1,
        "cuda:1",
        "device(type='cuda', index=1)",
    )
    assert flambeau.device("cuda", 1) == d
    assert d != "cuda:1" and not flambeau.device("cpu") == "cpu"  # devices equal devices only
    assert flambeau.device("cpu").index is None and str(flambeau.device("cpu")) == "cpu"
    assert flambeau.device(d) == d
    assert hash(flambeau.device("cuda:1")) == hash(d)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        flambeau.device("nosuchdevice")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        flambeau.device("cuda:x")


def test_tensor_device_and_cpu():
    t = flambeau.ones(3)
    assert t.device == flambeau.device("cpu") and t.device.type == "cpu" and t.is_cpu
    assert t.cpu() is t and t.to("cpu") is t and t.to("cpu", non_blocking=True) is t
    assert t.to("cpu", copy=True) is not t


def test_cuda_facade_without_a_plugin():
    assert flambeau.cuda.is_available() is False
    assert flambeau.cuda.device_count() == 0
    with pytest.raises(AssertionError, match="needs a CUDA device"):
        flambeau.cuda.synchronize()  # as PyTorch's CPU build: "not compiled with CUDA"
    # The device type exists (as in PyTorch); memory on it needs a backend.
    assert flambeau.device("cuda").type == "cuda"
    with pytest.raises(RuntimeError, match="cuda"):
        flambeau.zeros(2, device="cuda")


def test_cuda_calls_a_cpu_program_makes_unconditionally():
    # Seeding and cache calls are no-ops without CUDA, as in PyTorch; queries answer "none".
    assert flambeau.cuda.manual_seed_all(0) is None
    assert flambeau.cuda.manual_seed(3) is None
    with pytest.raises(ValueError):
        flambeau.cuda.manual_seed("x")
    assert flambeau.cuda.empty_cache() is None
    assert flambeau.cuda.is_bf16_supported() is False
    assert flambeau.cuda.is_initialized() is False
    assert flambeau.cuda.memory_allocated() == 0 == flambeau.cuda.max_memory_allocated()
    assert flambeau.cuda.get_rng_state_all() == []
    state = flambeau.get_rng_state()
    flambeau.cuda.manual_seed_all(123)  # leaves the CPU generator alone
    assert flambeau.equal(flambeau.get_rng_state(), state)


def test_no_backend_installed():
    assert [b for b in backends.available() if b.name.startswith("testdev")] == []
    with pytest.raises(RuntimeError, match="no flambeau backend provides device type 'nope'"):
        backends.load("nope")
    with pytest.raises(AttributeError):
        flambeau.nosuchattribute  # noqa: B018


def test_abi_is_exported_as_a_named_capsule():
    capsule = flambeau._C._backend_abi
    assert type(capsule).__name__ == "PyCapsule"
    assert "flambeau._C._backend_abi" in repr(capsule)
    major, minor = flambeau._C._backend_abi_version
    header = os.path.join(flambeau.get_include(), "flambeau", "backend_abi.h")
    text = open(header).read()
    assert f"#define FLB_ABI_MAJOR {major}" in text and f"#define FLB_ABI_MINOR {minor}" in text


def test_header_and_cmake_config_ship_with_the_package():
    assert os.path.isfile(os.path.join(flambeau.get_include(), "flambeau", "backend_python.h"))
    assert os.path.isfile(os.path.join(flambeau.get_cmake_dir(), "flambeauConfig.cmake"))


def test_import_loads_no_backend_machinery():
    code = "import sys, flambeau; print('flambeau.backends' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "req, installed, problem",
    [
        ("flambeau-tensor-core>=0.1,<0.2", "0.1.0", None),
        ("flambeau-tensor-core>=0.2", "0.1.0", "flambeau-tensor-core>=0.2"),
        ("flambeau_tensor_core (>=0.1, <0.2)", "0.2.1", "flambeau-tensor-core<0.2"),
        ("flambeau-tensor-core==0.1.*", "0.1.7", None),
        ("flambeau-tensor-core==0.1.*", "0.2.0", "flambeau-tensor-core==0.1.*"),
        ("flambeau-tensor-core~=0.1.2", "0.1.1", "flambeau-tensor-core~=0.1.2"),
        ("flambeau-tensor-core~=0.1.2", "0.1.9", None),
        ("flambeau-tensor-core>=9; extra == 'dev'", "0.1.0", None),
        ("numpy>=99", "0.1.0", None),
    ],
)
def test_distribution_requirements(req, installed, problem):
    assert backends.requirement_problem(req, "flambeau-tensor-core", installed) == problem


def test_upgrade_hint_names_the_package_that_is_too_old():
    assert "upgrade flambeau-tensor-core" in backends._upgrade_hint(
        "flambeau-tensor-core>=0.3", "0.1.0", "flambeau-x"
    )
    assert "upgrade flambeau-x" in backends._upgrade_hint(
        "flambeau-tensor-core<0.1", "0.1.0", "flambeau-x"
    )
