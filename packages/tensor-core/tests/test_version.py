"""flambeau.version: torch.version's names."""

from importlib import metadata

import flambeau


def test_version_module_names_what_was_built():
    v = flambeau.version
    assert v.__version__ == flambeau.__version__
    assert v.debug is False and v.hip is None and v.rocm is None and v.xpu is None
    try:
        metadata.version("flambeau-tensor-cuda")
        runtime = metadata.version("nvidia-cuda-runtime")
    except metadata.PackageNotFoundError:
        assert v.cuda is None
    else:
        assert v.cuda == ".".join(runtime.split(".")[:2])


def test_version_names_the_pytorch_api_and_compares_as_pytorchs():
    # Libraries gate features on torch.__version__ (skorch refuses to import below 1.1):
    # flambeau's names the PyTorch release it follows, with its own as the local label.
    v = flambeau.__version__
    assert v == f"2.13.0+flambeau.{metadata.version('flambeau-tensor-core')}"
    assert v.split("+")[0] == "2.13.0" and flambeau.version.flambeau == v.split("+flambeau.")[1]
    assert v >= "1.1.0" and v >= (2, 0) and v < "2.14" and v > "2.13.0"  # PEP 440 ranks
    assert not (v == "2.13.0") and v != (2, 13, 0)  # the local label counts, as in PyTorch
    assert v != "not a version" and v > "" and hash(v) == hash(str(v))
    from packaging.version import Version

    assert Version(v) >= Version("2.13") and v == Version(str(v))
