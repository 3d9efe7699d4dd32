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
