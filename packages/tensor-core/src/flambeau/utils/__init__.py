"""flambeau.utils: helpers beside the tensor API (``deterministic``, ``hooks``, ``dlpack``).

Sibling distributions add subpackages and modules here (flambeau-data's ``flambeau.utils.
data``, flambeau-autograd's ``flambeau.utils.checkpoint``), so the package path is
extended as ``flambeau``'s is.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from flambeau.utils import deterministic  # noqa: E402,F401
from flambeau.utils._swap import swap_tensors  # noqa: E402,F401


def __getattr__(name):
    # flambeau.utils.data (flambeau-data), flambeau.utils.checkpoint (flambeau-autograd) and
    # flambeau.utils.cpp_extension (flambeau-cpp-extension) load on first access, as
    # flambeau.nn does; so do the core's flambeau.utils.benchmark, hooks and dlpack.
    # flambeau.utils.tensorboard too, which needs the optional tensorboard package, and
    # flambeau.utils._pytree, which PyTorch programs reach as torch.utils._pytree.
    if name in (
        "data",
        "checkpoint",
        "cpp_extension",
        "benchmark",
        "hooks",
        "dlpack",
        "tensorboard",
        "_pytree",
    ):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'flambeau.utils' has no attribute {name!r}")
