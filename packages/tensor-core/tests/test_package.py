"""The flambeau package: lean import, lazy submodules, exports."""

import subprocess
import sys

import flambeau


def run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_import_does_not_load_numpy_or_heavy_modules():
    out = run(
        "import sys, flambeau; "
        "print(sorted(m for m in ('numpy', 'flambeau.cuda', 'flambeau.return_types') "
        "if m in sys.modules))"
    )
    assert out == "[]"


def test_creating_and_printing_tensors_needs_no_numpy():
    out = run(
        "import sys, flambeau; t = flambeau.tensor([[1.5, 2]]); s = repr(t); "
        "flambeau.manual_seed(0); flambeau.rand(3).tolist(); print('numpy' in sys.modules)"
    )
    assert out == "False"


def test_exports():
    for name in (
        "Tensor",
        "Size",
        "dtype",
        "device",
        "Generator",
        "tensor",
        "as_tensor",
        "from_numpy",
        "from_dlpack",
        "set_printoptions",
        "get_printoptions",
        "finfo",
        "iinfo",
        "manual_seed",
        "seed",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "result_type",
        "promote_types",
        "can_cast",
        "is_tensor",
        "is_floating_point",
        "is_complex",
        "numel",
        "rand",
        "randn",
        "randint",
        "randperm",
        "normal",
        "default_generator",
    ):
        assert hasattr(flambeau, name), name


def test_cuda_facade():
    assert flambeau.cuda.is_available() is False
    assert flambeau.cuda.device_count() == 0
    from flambeau import cuda

    assert cuda is flambeau.cuda


def test_return_types_module_is_importable():
    import flambeau.return_types as rt

    assert flambeau.return_types is rt
    assert rt.__name__ == "flambeau.return_types"


def test_unknown_attribute_is_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError, match="no_such_thing"):
        getattr(flambeau, "no_such_thing")  # noqa: B009
