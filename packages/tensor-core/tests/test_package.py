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
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('flambeau.') "
        "and m.split('.')[1] in flambeau._LAZY_SUBMODULES | flambeau._siblings.TOP_LEVEL))"
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


def test_siblings_and_namespaces_are_attributes_loaded_on_first_access():
    code = """
import sys, flambeau
for name in sorted(flambeau._siblings.TOP_LEVEL):
    try:
        ok = getattr(flambeau, name) is sys.modules["flambeau." + name]
    except ImportError as e:
        ok = "not installed" in str(e)
    print(name, ok)
"""
    assert run(code).split() == [
        w for name in sorted(flambeau._siblings.TOP_LEVEL) for w in (name, "True")
    ]
    for name in flambeau._LAZY_SUBMODULES:
        assert getattr(flambeau, name).__name__ == f"flambeau.{name}"


def test_missing_sibling_names_its_distribution_and_how_to_install(monkeypatch):
    import pytest

    from flambeau import _siblings

    monkeypatch.setitem(_siblings.SIBLINGS, "flambeau.nosuch", ("flambeau-nosuch", "packages/x"))
    monkeypatch.setattr(_siblings, "TOP_LEVEL", _siblings.TOP_LEVEL | {"nosuch"})
    for attempt in (lambda: flambeau.nosuch, lambda: __import__("flambeau.nosuch.deeper")):
        with pytest.raises(ImportError) as info:
            attempt()
        message = str(info.value)
        assert "'flambeau-nosuch'" in message and "pip install ./packages/x" in message
        assert "pip install --find-links dist flambeau-nosuch" in message


def test_missing_submodule_of_an_installed_package_is_not_a_missing_distribution():
    import pytest

    with pytest.raises(ModuleNotFoundError) as info:
        __import__("flambeau.utils.no_such_module")
    assert "not installed" not in str(info.value)
    # The same inside a sibling that is installed (flambeau.nn when the tests have it).
    import importlib.util

    if importlib.util.find_spec("flambeau.nn"):
        with pytest.raises(ModuleNotFoundError) as info:
            __import__("flambeau.nn.no_such_module")
        assert "not installed" not in str(info.value)
