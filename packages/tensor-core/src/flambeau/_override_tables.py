"""The tables of flambeau.overrides: which functions ``__torch_function__`` takes over,
which it never sees, a stand-in with each one's signature, and their names.

They are read from flambeau itself. A Tensor subclass's ``__torch_function__`` receives
the core's operators (each function, method, in-place method and Python operator that
``flambeau.ops_table()`` lists, and indexing) and the Python functions that hand
themselves to ``handle_torch_function``; those are the overridable functions, each found
under its public names in flambeau, flambeau.nn.functional (when installed),
flambeau.linalg, flambeau.fft, flambeau.special and on flambeau.Tensor. The stand-ins of
get_testing_overrides take the parameters of the operator's schema (its first overload's)
or of the Python function. A function written in Python that calls operators is in
neither table: a subclass sees the operators it calls.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import keyword
import types

# PyTorch's get_ignored_functions, by name: those flambeau has and that really do not
# reach __torch_function__ (an operator taking a tensor is dropped: it does) are flambeau's.
_IGNORED_NAMES = {
    "flambeau": """
        typename is_tensor is_storage set_default_tensor_type set_default_device
        get_default_device set_rng_state get_rng_state manual_seed initial_seed seed
        thread_safe_generator save load set_printoptions fork get_default_dtype
        get_num_interop_threads get_num_threads init_num_threads import_ir_module
        import_ir_module_from_buffer is_anomaly_enabled is_anomaly_check_nan_enabled
        is_grad_enabled merge_type_from_type_comment parse_ir parse_schema
        parse_type_comment set_anomaly_enabled set_flush_denormal set_num_interop_threads
        set_num_threads wait as_tensor from_numpy tensor default_generator device dtype finfo
        iinfo memory_format qscheme set_grad_enabled no_grad enable_grad inference_mode
        is_inference_mode_enabled layout arange as_strided bartlett_window blackman_window
        broadcast_shapes can_cast compile cudnn_affine_grid_generator cudnn_batch_norm
        cudnn_convolution cudnn_convolution_transpose cudnn_convolution_relu
        cudnn_convolution_add_relu cudnn_grid_sampler cudnn_is_acceptable miopen_ctc_loss
        empty empty_permuted empty_strided empty_quantized eye from_file full fill
        hamming_window hann_window kaiser_window linspace logspace mkldnn_adaptive_avg_pool2d
        mkldnn_convolution mkldnn_max_pool2d mkldnn_max_pool3d mkldnn_linear_backward_weights
        mkldnn_rnn_layer normal ones promote_types rand rand_like randn randn_like randint
        randint_like randperm range result_type scalar_tensor sparse_coo_tensor
        sparse_compressed_tensor sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor
        sparse_bsc_tensor sym_constrain_range sym_constrain_range_for_size sym_fresh_size
        tril_indices triu_indices vander zeros set_autocast_enabled is_autocast_enabled
        set_autocast_dtype get_autocast_dtype clear_autocast_cache set_autocast_cpu_enabled
        is_autocast_cpu_enabled set_autocast_xla_enabled is_autocast_xla_enabled
        set_autocast_ipu_enabled is_autocast_ipu_enabled set_autocast_cpu_dtype
        get_autocast_cpu_dtype set_autocast_ipu_dtype get_autocast_ipu_dtype
        get_autocast_gpu_dtype set_autocast_gpu_dtype get_autocast_xla_dtype
        set_autocast_xla_dtype autocast_increment_nesting autocast_decrement_nesting
        is_autocast_cache_enabled set_autocast_cache_enabled is_vulkan_available
        are_deterministic_algorithms_enabled use_deterministic_algorithms
        is_deterministic_algorithms_warn_only_enabled set_deterministic_debug_mode
        get_device_module get_deterministic_debug_mode set_float32_matmul_precision
        get_float32_matmul_precision unify_type_list is_warn_always_enabled set_warn_always
        vmap cond frombuffer asarray
    """,
    "flambeau.fft": "fftfreq rfftfreq",
    "flambeau.nn.functional": """
        assert_int_or_pair upsample upsample_bilinear upsample_nearest has_torch_function
        has_torch_function_unary has_torch_function_variadic handle_torch_function
        grouped_mm scaled_grouped_mm scaled_mm sigmoid hardsigmoid tanh hardswish
    """,
    "flambeau.nn.init": """
        calculate_gain uniform normal constant eye dirac xavier_uniform xavier_normal
        kaiming_uniform kaiming_normal orthogonal sparse
    """,
    "flambeau.overrides": "has_torch_function handle_torch_function",
    "flambeau.Tensor": """
        __delitem__ __dir__ __getattribute__ __init__ __iter__ __init_subclass__ __delattr__
        __setattr__ __torch_function__ __torch_dispatch__ __new__ __class__ __subclasshook__
        __hash__ as_subclass new new_tensor new_empty new_empty_strided new_zeros new_ones
        new_full unflatten to_sparse_coo to_sparse_csr to_sparse_csc to_sparse_bsr
        to_sparse_bsc to_padded_tensor
    """,
}

# The Tensor methods and properties PyTorch hands to __torch_function__ (t.size() as
# Tensor.size, t.shape as Tensor.shape.__get__) that have no check of their own here: bound
# by hand in C++, or written in Python without one. flambeau.overrides installs a wrapper
# over each (_C._DispatchingMethod, _C._DispatchingProperty) once Tensor is complete. The
# operators' methods and functions made with _dispatch_on check for themselves.
_WRAPPED_METHODS = """
    __array__ __bool__ __complex__ __deepcopy__ __dlpack__ __dlpack_device__ __float__
    __index__ __int__ __len__ __rdiv__ __reduce_ex__ _is_view apply_ ccol_indices cdouble
    cfloat chalf coalesce col_indices const_data_ptr crow_indices cuda data_ptr dense_dim dim
    divide_ element_size fill_diagonal_ get_device index_reduce index_reduce_ indices ipu
    is_coalesced is_complex is_contiguous is_floating_point is_inference is_neg is_pinned
    is_shared is_signed item map_ mtia multiply_ ndimension nelement nonzero_static numel
    numpy pin_memory polygamma polygamma_ put put_ record_stream
    register_post_accumulate_grad_hook renorm_ repeat_interleave retain_grad row_indices
    share_memory_ size smm sparse_dim sparse_mask split_with_sizes sspaddmm storage
    storage_offset storage_type stride subtract_ sum_to_size tile to_dense to_sparse tolist type
    untyped_storage values where xpu
"""
_WRAPPED_PROPERTIES = """
    H T _base _version data device dtype grad grad_dtype grad_fn imag is_cpu is_cuda is_ipu
    is_leaf is_maia is_meta is_mkldnn is_mps is_mtia is_nested is_quantized is_sparse
    is_sparse_csr is_vulkan is_xla is_xpu itemsize layout mH mT nbytes ndim output_nr real
    requires_grad shape volatile
"""
# Aliases PyTorch hands over as the method they alias.
_WRAPPED_ALIASES = {"nelement": "numel", "ndimension": "dim"}

# PyTorch's get_default_nowrap_functions: properties whose tensor is stored, not computed.
_NOWRAP_PROPERTIES = ("_base", "grad", "_grad")


def _import(name: str):
    """The module (or flambeau.Tensor) called ``name``; None when it is not installed."""
    if name == "flambeau.Tensor":
        import flambeau

        return flambeau.Tensor
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _namespaces() -> list:
    """(name, namespace) for the namespaces PyTorch's tables cover, in its order."""
    names = ["flambeau", "flambeau.nn.functional", "flambeau.nn.init", "flambeau.Tensor"]
    names += ["flambeau.linalg", "flambeau.fft", "flambeau.special"]
    return [(name, ns) for name in names if (ns := _import(name)) is not None]


def _has_tensor_parameter(rows: list) -> bool:
    return any(p["type"].startswith("Tensor") for row in rows for p in row["params"])


def _rows_by_name() -> dict:
    """The core's operators (not flambeau.library's): name -> its overloads' rows."""
    import flambeau

    by_name: dict = {}
    for row in flambeau.ops_table():
        if row["category"] != "custom":
            by_name.setdefault(row["name"], []).append(row)
    return by_name


@functools.cache
def _operator_rows() -> dict:
    """Each object the core hands to __torch_function__ -> (its operator's schema row,
    how it is called: "function", "method" or "operator")."""
    import flambeau
    from flambeau import _C

    found = {}
    for name, rows in _rows_by_name().items():
        if not _has_tensor_parameter(rows):
            continue  # a factory: no argument can be an instance of a subclass
        row, variants = rows[0], {v for r in rows for v in r["variants"]}
        attributes = []
        if "function" in variants:
            attributes.append((_C, name, "function"))
        if "method" in variants:
            attributes.append((flambeau.Tensor, name, "method"))
        if "inplace" in variants:
            attributes.append((flambeau.Tensor, name + "_", "method"))
        attributes += [(flambeau.Tensor, d, "operator") for r in rows for d in r["dunders"]]
        for owner, attribute, kind in attributes:
            obj = getattr(owner, attribute, None)
            if obj is not None and obj not in found:
                found[obj] = (row, kind)
    for name, params in (("__getitem__", "self indices"), ("__setitem__", "self indices value")):
        row = {"params": [_parameter(p) for p in params.split()], "variants": []}
        found[getattr(flambeau.Tensor, name)] = (row, "operator")
    return found


def _parameter(name: str) -> dict:
    return {"name": name, "type": "Any", "default": None, "kwonly": False}


def _dispatches_itself(func) -> bool:
    """A Python function that hands its calls to handle_torch_function (PyTorch's pattern,
    or wrap_torch_function), or a Tensor method in the wrapper of _WRAPPED_METHODS."""
    from flambeau import _C

    if isinstance(func, _C._DispatchingMethod):
        return True
    code = getattr(func, "__code__", None)
    return code is not None and "handle_torch_function" in code.co_names


def _public(namespace, name: str) -> bool:
    """PyTorch's rule for the names its tables list (the others are only named)."""
    if isinstance(namespace, type):
        return True  # a Tensor method, dunders included
    return not name.startswith("_") and not name.endswith("_") and name[0].islower()


def _members(namespace) -> list:
    """(name, object) for the names of a namespace the tables look at."""
    out = []
    for name in dir(namespace):
        if not isinstance(namespace, type) and name.startswith("__"):
            continue
        try:
            obj = getattr(namespace, name)
        except Exception:
            continue
        if isinstance(obj, types.ModuleType) or name == "__weakref__":
            continue
        if isinstance(namespace, type) and getattr(object, name, None) is obj:
            continue
        out.append((name, obj))
    return out


@functools.cache
def _tables() -> tuple:
    """(overridable functions by namespace, name of every function)."""
    overridable: dict = {}
    index = {}
    dispatching = _operator_rows()
    ignored = get_ignored_functions()
    for ns_name, namespace in _namespaces():
        for name, obj in _members(namespace):
            if not callable(obj) and hasattr(obj, "__get__"):  # a property
                index[obj.__get__] = f"{ns_name}.{name}.__get__"
                if hasattr(obj, "__set__"):
                    index[obj.__set__] = f"{ns_name}.{name}.__set__"
                continue
            if not callable(obj):
                continue
            index[obj] = f"{ns_name}.{name}"
            if not _public(namespace, name) or obj in ignored:
                continue
            if obj in dispatching or _dispatches_itself(obj):
                functions = overridable.setdefault(namespace, [])
                if obj not in functions:
                    functions.append(obj)
    for ns_name, names in _IGNORED_NAMES.items():  # some load lazily, outside dir()
        for name, obj in _named(ns_name, names):
            if callable(obj) and obj not in index:
                index[obj] = f"{ns_name}.{name}"
    return overridable, index


def _named(ns_name: str, names: str) -> list:
    """(name, object) for the names the namespace has."""
    namespace = _import(ns_name)
    if namespace is None:
        return []
    return [(n, getattr(namespace, n)) for n in names.split() if hasattr(namespace, n)]


@functools.cache
def get_ignored_functions() -> set:
    """The public functions whose calls never reach ``__torch_function__``: mostly because
    none of their arguments can be a tensor (factories, settings, dtypes and devices).
    PyTorch's list, for the names flambeau has, less the operators that do take a tensor,
    plus every operator that takes none.

    >>> from flambeau.overrides import get_ignored_functions
    >>> flambeau.Tensor.as_subclass in get_ignored_functions()
    True
    >>> flambeau.zeros in get_ignored_functions(), flambeau.add in get_ignored_functions()
    (True, False)
    """
    from flambeau import _C

    dispatching = _operator_rows()
    found = set()
    for ns_name, names in _IGNORED_NAMES.items():
        found |= {f for _, f in _named(ns_name, names) if callable(f)}
    for name, rows in _rows_by_name().items():
        if not _has_tensor_parameter(rows) and hasattr(_C, name):
            found.add(getattr(_C, name))
    return {f for f in found if f not in dispatching and not _dispatches_itself(f)}


@functools.cache
def get_default_nowrap_functions() -> set:
    """The property getters whose result ``Tensor.__torch_function__`` returns as it is,
    not re-classed as the subclass: they give a stored tensor (``grad``), and wrapping
    it would break ``x.grad is x.grad``.

    >>> from flambeau.overrides import get_default_nowrap_functions
    >>> flambeau.Tensor.grad.__get__ in get_default_nowrap_functions()
    True
    """
    import flambeau

    found = set()
    for name in _NOWRAP_PROPERTIES:
        prop = inspect.getattr_static(flambeau.Tensor, name, None)
        if prop is not None and hasattr(prop, "__get__"):
            found.add(prop.__get__)
    return found


def get_overridable_functions() -> dict:
    """The functions ``__torch_function__`` takes over, by namespace (the module, or
    flambeau.Tensor for its methods and operators).

    >>> from flambeau.overrides import get_overridable_functions
    >>> functions = get_overridable_functions()
    >>> flambeau.add in functions[flambeau], flambeau.Tensor.__add__ in functions[flambeau.Tensor]
    (True, True)
    >>> flambeau.zeros in functions[flambeau]
    False
    """
    return _tables()[0]


def resolve_name(f) -> str | None:
    """The name of ``f`` as __torch_function__ receives it (evaluating it gives ``f``
    back), or None for a function none of the namespaces holds.

    >>> from flambeau.overrides import resolve_name
    >>> resolve_name(flambeau.linalg.inv), resolve_name(flambeau.Tensor.add)
    ('flambeau.linalg.inv', 'flambeau.Tensor.add')
    >>> resolve_name(print) is None
    True
    """
    custom = _custom_op_name(f)
    if custom is not None:
        return custom
    return _tables()[1].get(f)


def _custom_op_name(f) -> str | None:
    """ "mylib.myadd" or "mylib.myadd.default" for flambeau.ops' operators (PyTorch's str)."""
    import sys

    custom = sys.modules.get("flambeau._custom_ops")
    if custom is None:
        return None
    if isinstance(f, custom.OpOverloadPacket):
        return f._qualname.replace("::", ".")
    if isinstance(f, custom.OperatorEntry):
        s = f.schema
        return f"{s.namespace}.{s.name}.{s.overload or 'default'}"
    return None


# ---- get_testing_overrides -----------------------------------------------------------


def _default(param: dict):
    import flambeau
    from flambeau._op_schema import _literal

    text = param["default"]
    if text.isidentifier() and text not in {"None", "True", "False"}:
        return getattr(flambeau, text)  # a named default: contiguous_format
    return _literal(text)


def _schema_signature(row: dict, kind: str, out: bool) -> inspect.Signature:
    """The Python signature of an operator called as a function, a method or a Python
    operator (which takes its positional parameters only)."""
    params = []
    for i, p in enumerate(row["params"]):
        if kind == "operator" and p["kwonly"]:
            continue
        name = p["name"] + "_" if keyword.iskeyword(p["name"]) else p["name"]
        if i == 0 and kind != "function":
            name = "self"
        kind_ = (
            inspect.Parameter.KEYWORD_ONLY
            if p["kwonly"]
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        default = inspect.Parameter.empty if p["default"] is None else _default(p)
        params.append(inspect.Parameter(name, kind_, default=default))
    if out and kind == "function":
        params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _stand_in(signature: inspect.Signature, name: str):
    """A function with ``signature`` that checks its arguments and returns -1."""

    def stand_in(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return -1

    stand_in.__signature__ = signature
    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def _python_signature(func) -> inspect.Signature:
    """func's own signature; (self, *args, **kwargs) for a Tensor method bound in C++ by
    hand, which has none."""
    try:
        return inspect.signature(func)
    except ValueError:
        P = inspect.Parameter
        return inspect.Signature(
            [
                P("self", P.POSITIONAL_OR_KEYWORD),
                P("args", P.VAR_POSITIONAL),
                P("kwargs", P.VAR_KEYWORD),
            ]
        )


@functools.cache
def get_testing_overrides() -> dict:
    """A stand-in for every overridable function: a function with the same signature
    that returns -1, for testing that a type defining ``__torch_function__`` covers the
    API. Operators take the parameters of their schema (a method's first one is
    ``self``; ``out=None`` is added where the operator has an out= form).

    >>> import inspect
    >>> from flambeau.overrides import get_testing_overrides
    >>> my_add = get_testing_overrides()[flambeau.add]
    >>> inspect.signature(my_add)
    <Signature (input, other, *, alpha=1, out=None)>
    >>> my_add(flambeau.ones(2), 1)
    -1
    """
    rows = _operator_rows()
    found = {}
    for functions in get_overridable_functions().values():
        for func in functions:
            if func in found:
                continue
            name = getattr(func, "__name__", "stand_in")
            if func in rows:
                row, kind = rows[func]
                signature = _schema_signature(row, kind, "out" in row["variants"])
            else:
                signature = _python_signature(func)
            found[func] = _stand_in(signature, name)
    return found
