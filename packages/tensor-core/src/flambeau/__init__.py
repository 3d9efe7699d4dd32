"""flambeau: PyTorch-style tensors on a C++ core.

This package (distribution ``flambeau-tensor-core``) owns the ``flambeau``
namespace; sibling distributions (flambeau-autograd, flambeau-nn, ...) add
subpackages to it. Importing it stays cheap: NumPy and the optional
submodules (``flambeau.cuda``, ``flambeau.return_types``) load on first use.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

import os as _os  # noqa: E402
import sys as _sys  # noqa: E402

# Idle OpenMP threads spin briefly before they sleep: long enough to catch the next
# parallel region of a training step (an LSTM step runs two per time step; waking a
# sleeping thread for each made MLP steps and LSTMs 1.7x slower), short enough not to
# starve other processes. OpenBLAS runs on these threads (one pool, see
# docs/design/one-thread-pool.rst). Read once, when the core loads; a user's
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ.setdefault("GOMP_SPINCOUNT", "30000")

from flambeau import _openblas  # noqa: E402

_openblas.preload()

from flambeau import (  # noqa: E402,F401
    _C,
    _complex,
    _grad,
    _pickling,
    _polygamma,
    _resize,
    _siblings,
    _sorting,
    _stft,
    torch_version,  # noqa: E402
)
from flambeau import _printing as _printing  # noqa: E402
from flambeau._C import *  # noqa: E402,F403
from flambeau._C import Generator, Tensor, UntypedStorage, default_generator, device, dtype  # noqa: E402,F401

# `import *` skips names starting with "_"; the table's underscored operators
# (_foreach_add, _softmax_backward_data, ...) are public all the same.
globals().update((_name, getattr(_C, _name)) for _name in _C._underscored_ops)
from flambeau import (  # noqa: E402
    _class_docs,
    _hash_tensor,
    _legacy_constructors,
    _legacy_linalg,
    _misc_functions,
    _nn_ops,
    _shape_composites,
    _sparse_entry,
    _statistics,
    _tensor_extras,
    _tensor_methods,
    _view_copies,
    overrides,
    storage,
)
from flambeau._compile import compile  # noqa: E402,F401,A004
from flambeau._deterministic import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from flambeau._device_module import get_device_module  # noqa: E402,F401
from flambeau._dlpack import from_dlpack, to_dlpack  # noqa: E402,F401
from flambeau._dtype_aliases import *  # noqa: E402,F403
from flambeau._dtype_info import finfo, iinfo  # noqa: E402,F401
from flambeau._errors import AcceleratorError, OutOfMemoryError  # noqa: E402,F401
from flambeau._functional import einsum, meshgrid, tensordot  # noqa: E402,F401
from flambeau._grad_mode import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from flambeau._hash_tensor import hash_tensor  # noqa: E402,F401
from flambeau._interop import compiled_with_cxx11_abi  # noqa: E402,F401
from flambeau._legacy_constructors import typename  # noqa: E402,F401
from flambeau._legacy_linalg import *  # noqa: E402,F403
from flambeau._lobpcg import lobpcg  # noqa: E402,F401
from flambeau._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from flambeau._misc_functions import *  # noqa: E402,F403
from flambeau._misc_functions import _assert  # noqa: E402,F401  (torch._assert)
from flambeau._nn_ops import *  # noqa: E402,F403
from flambeau._printing import (  # noqa: E402,F401
    get_printoptions,
    printoptions,
    set_printoptions,
)
from flambeau._quantization import *  # noqa: E402,F403
from flambeau._runtime_config import *  # noqa: E402,F403
from flambeau._shape_composites import *  # noqa: E402,F403
from flambeau._shape_composites import inclusive_range as range  # noqa: E402,F401,A001
from flambeau._size import Size  # noqa: E402,F401
from flambeau._sorting import unique, unique_consecutive  # noqa: E402,F401
from flambeau._sparse_entry import *  # noqa: E402,F403
from flambeau._statistics import *  # noqa: E402,F403
from flambeau._stft import istft, stft  # noqa: E402,F401
from flambeau._streams import Event, Stream  # noqa: E402,F401
from flambeau._symbolic import *  # noqa: E402,F403
from flambeau._view_copies import *  # noqa: E402,F403
from flambeau.random import (  # noqa: E402,F401
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    thread_safe_generator,
)

# The PyTorch release whose API this follows, with flambeau's own release as the local
# label (flambeau.torch_version says why); flambeau's release alone is version.flambeau.
_RELEASE = "0.1.0"
__version__ = torch_version.TorchVersion(f"{torch_version.PYTORCH_API}+flambeau.{_RELEASE}")
legacy_contiguous_format = _C.contiguous_format  # PyTorch's other name for it

Tensor.__repr__ = _printing.tensor_repr
Tensor.__str__ = _printing.tensor_repr
Tensor.__format__ = _printing.tensor_format
_complex.install()
_grad.install()
_resize.install()
_pickling.install()
_sorting.install()
_stft.install()
_polygamma.install()
_legacy_constructors.install()
_shape_composites.install()
_statistics.install()
_legacy_linalg.install()
_misc_functions.install()
_view_copies.install()
_nn_ops.install()
_tensor_methods.install()
_class_docs.install()
_tensor_extras.install()
_hash_tensor.install()
_sparse_entry.install()
overrides.install()
storage.install()
overrides.install_wrappers()  # last: every Tensor attribute exists
globals().update(_legacy_constructors.LEGACY_TYPES)
globals().update(storage.LEGACY_STORAGES)
from flambeau.storage import TypedStorage, is_storage  # noqa: E402,F401

# The core's classes under the names PyTorch users see: type(x) is <class
# 'flambeau.Tensor'> and errors say "'Tensor' object has no attribute ..." (assigning
# __name__ also drops the "flambeau._C." prefix CPython keeps for messages).
for _cls, _module in ((Tensor, "flambeau"), (device, "flambeau"), (dtype, "flambeau"),
                      (UntypedStorage, "flambeau.storage")):  # fmt: skip
    _cls.__module__ = _module
    _cls.__name__ = _cls.__name__
del _cls, _module

# Submodules of the core that load on first attribute access, as `import torch` has them.
_LAZY_SUBMODULES = frozenset(
    {
        "__future__",
        "_dynamo",
        "accelerator",
        "amp",
        "backends",
        "compiler",
        "cpu",
        "cuda",
        "fft",
        "functional",
        "futures",
        "hub",
        "jit",
        "library",
        "linalg",
        "mps",
        "mtia",
        "profiler",
        "return_types",
        "serialization",
        "signal",
        "sparse",
        "version",
        "special",
        "testing",
        "types",
        "utils",
        "xpu",
    }
)


def save(obj, f, *, _use_torch_format=False) -> None:
    """Saves tensors in nested containers to a pickle-free archive (see flambeau.serialization).

    >>> import io
    >>> buf = io.BytesIO()
    >>> flambeau.save({"weight": flambeau.tensor([1.0, 2.0]), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> flambeau.load(buf)
    {'weight': tensor([1., 2.]), 'step': 3}
    """
    from flambeau import serialization

    serialization.save(obj, f, _use_torch_format=_use_torch_format)


def load(f, map_location=None, *, weights_only=True, mmap=False):
    """Loads flambeau.save's archives, torch.save's checkpoints or .safetensors files.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "model.pt")
    ...     flambeau.save({"weight": flambeau.ones(2)}, path)
    ...     state = flambeau.load(path)
    >>> state
    {'weight': tensor([1., 1.])}
    """
    from flambeau import serialization

    return serialization.load(f, map_location, weights_only=weights_only, mmap=mmap)


# flambeau.amp's names at top level, loaded with it on first access.
_AMP_NAMES = frozenset(
    {
        "GradScaler",
        "autocast",
        "_amp_foreach_non_finite_check_and_unscale_",
        "_amp_update_scale_",
    }
)


# PyTorch's samplers the core has no kernel for: flambeau.distributions' (flambeau-autograd).
_SAMPLER_NAMES = frozenset(
    {"binomial", "_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet"}
)


# PyTorch's anomaly-mode switches at top level; the mode is flambeau.autograd's.
_ANOMALY_NAMES = {
    "is_anomaly_enabled": "is_enabled",
    "is_anomaly_check_nan_enabled": "is_check_nan_enabled",
    "set_anomaly_enabled": "set_enabled",
}


def __getattr__(name):
    if name in _SAMPLER_NAMES:
        import importlib

        return getattr(importlib.import_module("flambeau.distributions._samplers"), name)
    if name in _ANOMALY_NAMES:
        from flambeau.autograd import anomaly_mode

        return getattr(anomaly_mode, _ANOMALY_NAMES[name])
    if name in _AMP_NAMES:
        from flambeau.amp import _scale_ops, autocast_mode, grad_scaler

        for module in (autocast_mode, grad_scaler, _scale_ops):
            if hasattr(module, name):
                return getattr(module, name)
    # Submodules of the core and sibling packages (flambeau.nn, ...) load on first
    # access; a sibling that is not installed raises ImportError naming its distribution.
    if name in _LAZY_SUBMODULES or name in _siblings.TOP_LEVEL:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    # flambeau.func (function transforms, from flambeau-autograd) and its vmap, which
    # PyTorch also has at top level as torch.vmap.
    if name in ("func", "vmap"):
        import importlib

        try:
            func = importlib.import_module(f"{__name__}.func")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.func":
                raise
            raise ModuleNotFoundError(
                "flambeau.func is provided by the distribution 'flambeau-autograd', which is "
                "not installed. " + _siblings.install_hint("flambeau-autograd"),
                name=e.name,
            ) from None
        return func if name == "func" else func.vmap
    if name == "ops":  # flambeau.ops.<namespace>.<operator> (custom operators, aten)
        from flambeau._custom_ops import ops

        return ops
    # flambeau.<device type>: the module of the backend plugin providing it.
    if not name.startswith("_"):
        from flambeau import backends

        if name in backends._installed():
            backends._on_device_named(name)  # honours FLAMBEAU_BACKEND_AUTOLOAD
            return backends.load(name)
    raise AttributeError(f"module 'flambeau' has no attribute {name!r}")


def ops_table() -> list:
    """The operator table: one dict per operator overload (name, schema, params, ...).

    The built-in operators, then the custom operators flambeau.library has defined
    (category "custom", name "namespace::name").

    >>> rows = flambeau.ops_table()
    >>> relu = next(r for r in rows if r["name"] == "relu")
    >>> relu["schema"]
    'relu(Tensor input) -> Tensor'
    >>> relu["category"], relu["variants"]
    ('pointwise', ['function', 'method', 'inplace'])
    """
    rows = _C.ops_table()
    custom = _sys.modules.get("flambeau._custom_ops")  # only once a library was used
    if custom is not None:
        rows.extend(custom.ops_table_rows())
    return rows


def get_include() -> str:
    """The directory holding ``flambeau/backend_abi.h``, the C ABI backend plugins build on.

    >>> import os
    >>> os.path.isfile(os.path.join(flambeau.get_include(), "flambeau", "backend_abi.h"))
    True
    """
    import os

    return os.path.join(os.path.dirname(__file__), "include")


def get_cmake_dir() -> str:
    """The directory of ``flambeauConfig.cmake``: pass it as ``-Dflambeau_DIR=``.

    >>> import os
    >>> os.path.isfile(os.path.join(flambeau.get_cmake_dir(), "flambeauConfig.cmake"))
    True
    """
    import os

    return os.path.join(os.path.dirname(__file__), "share", "cmake", "flambeau")


_siblings.install()
