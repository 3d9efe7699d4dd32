"""The Tensor subclass every sparse layout builds on (see docs/design/sparse.rst).

A sparse tensor is a ``flambeau.Tensor`` whose own (dense) object is a placeholder: one
zero element expanded to the tensor's shape, with its dtype and device, so that shape,
dtype, device, ``dim()`` and ``numel()`` answer as PyTorch's do. The real data are
attributes of the instance (a layout's index tensors and its values).

Nothing may ever compute on the placeholder. ``__torch_function__`` sends every
operator-table function and Tensor method called with a sparse tensor to the layout's
table of implementations, and raises PyTorch's NotImplementedError for the rest; every
other Tensor attribute (C++ methods that do not dispatch, Python-level methods,
properties) is replaced on the class by the table's implementation or by a blocker, so
a Tensor method added later is blocked by default.
"""

from __future__ import annotations

import copy
import inspect

from flambeau import _C, _sparse_entry
from flambeau.overrides import _wrapped_by, redispatch_function

Tensor = _C.Tensor

# Attributes that read only the placeholder's metadata (shape, dtype, device) or are
# Python's own object machinery: safe on a sparse tensor as they are.
SAFE = frozenset(
    {
        "__class__",
        "__delattr__",
        "__dict__",
        "__dir__",
        "__doc__",
        "__getattribute__",
        "__hash__",
        "__init__",
        "__init_subclass__",
        "__module__",
        "__new__",
        "__setattr__",
        "__sizeof__",
        "__subclasshook__",
        "__torch_function__",
        "__array_priority__",
        "dim",
        "ndimension",
        "ndim",
        "shape",
        "size",
        "numel",
        "nelement",
        "dtype",
        "device",
        "get_device",
        "is_cpu",
        "is_cuda",
        "is_meta",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "is_inference",
        "is_quantized",
        "is_mkldnn",
        "is_nested",
        "element_size",
        "itemsize",
        "as_subclass",
        "names",
    }
)
_DEVICE_PREDICATES = ("is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia", "is_xla", "is_vulkan")


_DUNDER_NAMES = {"truediv": "div", "floordiv": "floor_divide", "pos": "positive"}


def aten_name(name: str) -> str:
    """The operator behind a Tensor method or dunder: __radd__ -> add, __iadd__ -> add_."""
    if not (name.startswith("__") and name.endswith("__")):
        return name
    op = name[2:-2]
    suffix = ""
    if op[0] in "ri" and hasattr(Tensor, f"__{op[1:]}__"):
        suffix = "_" if op[0] == "i" else ""
        op = op[1:]
    return _DUNDER_NAMES.get(op, op) + suffix


def unsupported(name: str, backend: str) -> NotImplementedError:
    """PyTorch's error for an operator without a kernel for this layout."""
    return NotImplementedError(
        f"Could not run 'aten::{aten_name(name)}' with arguments from the '{backend}' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build)."
    )


def register(table: dict, *names: str):
    """Decorator: the function implements the named functions/methods for a layout."""

    def add(fn):
        for name in names:
            table[name] = fn
        return fn

    return add


class SparseTensorBase(Tensor):
    """A Tensor subclass holding a sparse layout; instances come from ``_wrap``."""

    __slots__ = ()
    _OPS: dict = {}  # name -> implementation, each layout's own table
    _BACKEND_PREFIX = "Sparse"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if "handle_torch_function" in getattr(getattr(func, "__code__", None), "co_names", ()):
            # A function written in Python (F.relu, flambeau.cdist): it runs, and its
            # operators come back here, as PyTorch's run on a sparse layout.
            return redispatch_function(func, types, args, kwargs)
        name = getattr(func, "__name__", None)
        impl = cls._OPS.get(name)
        if impl is None and _wrapped_by(func) is not None:
            # Tensor's own size, dtype, device, ... (which read the placeholder's metadata),
            # or a method of a dense tensor given a sparse one (dense.sparse_mask(sparse)):
            # it runs as it is, its own calls coming back here.
            return redispatch_function(func, types, args, kwargs)
        if impl is None:
            if name is not None and name.startswith("_foreach_"):
                return foreach_one_by_one(name, args, kwargs or {})
            device = next(_sparse_arguments(args, kwargs or {})).device
            raise unsupported(name or repr(func), cls._backend(device))
        return impl(*args, **(kwargs or {}))

    @classmethod
    def _backend(cls, device) -> str:
        return cls._BACKEND_PREFIX + device.type.upper()


def _sparse_arguments(args, kwargs):
    """The sparse tensors among the arguments, lists and tuples of tensors included."""
    for a in (*args, *kwargs.values()):
        for t in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(t, SparseTensorBase):
                yield t


# _foreach_* positional scalars that the per-tensor method takes as a keyword.
_FOREACH_VALUE_AT = {"addcmul": 3, "addcmul_": 3, "addcdiv": 3, "addcdiv_": 3}


def foreach_one_by_one(name: str, args, kwargs):
    """A _foreach_* operator with sparse tensors in its lists: PyTorch's slow path, the
    per-tensor operator at each position of the lists (Tensor.add_ for _foreach_add_),
    a list argument giving each position its own element and any other argument shared.
    In-place variants return the list they updated, the others a tuple of results (as
    the dense ones)."""
    op = name[len("_foreach_") :]
    n = len(next(a for a in (*args, *kwargs.values()) if isinstance(a, (list, tuple))))
    value_at = _FOREACH_VALUE_AT.get(op)

    def at(a, i):
        return a[i] if isinstance(a, (list, tuple)) else a

    results = []
    for i in range(n):
        call_args = [at(a, i) for a in args]
        call_kwargs = {k: at(v, i) for k, v in kwargs.items()}
        if value_at is not None and len(call_args) > value_at:
            call_kwargs["value"] = call_args.pop(value_at)
        first = call_args[0]
        if isinstance(first, Tensor):
            results.append(getattr(first, op)(*call_args[1:], **call_kwargs))
        else:  # a scalar first operand (_foreach_pow(2.0, tensors)): the function
            results.append(getattr(_flambeau(), op)(*call_args, **call_kwargs))
    if op.endswith("_"):
        return args[0] if args else kwargs["self"]
    return tuple(results)


def _flambeau():
    import flambeau

    return flambeau


def call_sparse(name: str, args, kwargs):
    """Runs the implementation of name for the first sparse argument's layout (functions
    that exist only for sparse tensors: smm, hspmm, indices_copy, ...)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, SparseTensorBase):
            impl = type(a)._OPS.get(name)
            if impl is None:
                raise unsupported(name, a._backend(a.device))
            return impl(*args, **kwargs)
    raise RuntimeError(f"{name}: expected a sparse tensor argument, but every tensor is strided")


def placeholder(shape, dtype, device):
    """A tensor of that shape, dtype and device that owns one element (never read)."""
    return _C.zeros((), dtype=dtype, device=device).expand(tuple(shape))


def wrap(cls, shape, dtype, device, **data):
    """A new instance of the sparse class cls with the given data attributes."""
    if _fingerprint() != _sealed_at.get(cls):  # Tensor's attributes changed since
        seal(cls)
    out = placeholder(shape, dtype, device).as_subclass(cls)
    out.__dict__.update(data)
    return out


def _blocked_method(name: str):
    def blocked(self, *args, **kwargs):
        raise unsupported(name, self._backend(self.device))

    blocked.__name__ = name
    blocked.__doc__ = f"Not available for this sparse layout (``Tensor.{name}``)."
    return blocked


def _blocked_property(name: str):
    def get(self):
        raise unsupported(name, self._backend(self.device))

    return property(get, doc=f"Not available for this sparse layout (``Tensor.{name}``).")


def _method(name: str, impl):
    def method(self, *args, **kwargs):
        return impl(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = impl.__doc__
    return method


# Tensor's attributes when each class was sealed: siblings (autograd) add or replace
# Tensor attributes after import, and sparse classes are sealed again then.
_sealed_at: dict = {}


def _fingerprint() -> int:
    return sum(map(id, Tensor.__dict__.values()))


def seal(cls) -> None:
    """Gives cls every Tensor attribute it does not define itself: the implementation of
    its op table under that name, else a blocker raising NotImplementedError."""
    _sealed_at[cls] = _fingerprint()
    cls._OPS = {**COMMON, **cls._OPS}
    own = cls.__mro__[: cls.__mro__.index(Tensor)]  # cls and the sparse bases
    for name in dir(Tensor):
        if name in SAFE or name in _DEVICE_PREDICATES or any(name in k.__dict__ for k in own):
            continue
        attr = inspect.getattr_static(Tensor, name)
        is_method = callable(attr) and not isinstance(attr, property)
        impl = cls._OPS.get(name)
        if is_method:
            setattr(cls, name, _blocked_method(name) if impl is None else _method(name, impl))
        elif not isinstance(attr, (int, float, str, type(None))):
            setattr(cls, name, _blocked_property(name) if impl is None else property(impl))
    # Methods sparse tensors have and dense ones do not (indices, coalesce, _nnz, ...).
    for name, impl in cls._OPS.items():
        if not hasattr(cls, name) and name not in FUNCTIONS_ONLY:
            setattr(cls, name, _method(name, impl))


# Table entries that are functions of flambeau only, never Tensor methods.
FUNCTIONS_ONLY = _sparse_entry.FUNCTIONS_ONLY | {"_sparse_softmax", "_sparse_log_softmax"}


# Implementations every sparse layout shares (see _common_ops.py); seal() adds them to a
# layout's own table.
COMMON: dict = {}


class SparseData(SparseTensorBase):
    """What every layout has: values (the autograd leaf, when one is wanted) and index
    tensors, all held in the instance's attributes ``_sp_*``."""

    __slots__ = ()

    def _replace(self, shape=None, **data):
        """A tensor of the same class with some data attributes replaced."""
        attrs = dict(self.__dict__)
        attrs.update(data)
        values = attrs["_sp_values"]
        return wrap(type(self), self.shape if shape is None else shape, values.dtype,
                    values.device, **attrs)  # fmt: skip

    def _index_tensors(self) -> dict:
        return {
            k: v for k, v in self.__dict__.items() if k != "_sp_values" and isinstance(v, Tensor)
        }

    # Autograd: gradients reach the values; the sparse tensor reports theirs.
    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._sp_values.requires_grad = flag

    @property
    def grad(self):
        g = self._sp_values.grad
        return None if g is None else self._replace(_sp_values=g)

    @grad.setter
    def grad(self, value):
        if value is not None:
            value = value._sp_values if isinstance(value, SparseData) else value
        self._sp_values.grad = value

    @property
    def is_leaf(self):
        return self._sp_values.is_leaf

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    def requires_grad_(self, requires_grad=True):
        self._sp_values.requires_grad_(requires_grad)
        return self

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def is_sparse_csr(self):
        return False

    def is_contiguous(self, memory_format=None):
        return False

    def __repr__(self):
        from flambeau.sparse._printing import sparse_repr

        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        return object.__format__(self.__repr__(), spec)

    def __reduce_ex__(self, protocol):
        return _rebuild, (type(self), tuple(self.shape), self.__dict__.copy())

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment"
            )
        out = self._replace(
            _sp_values=self._sp_values.detach().clone().requires_grad_(self.requires_grad),
            **{k: v.clone() for k, v in self._index_tensors().items()},
        )
        # The user's attributes (and nn.Parameter's mark, _is_param) copy along, as a
        # dense tensor's __dict__ does.
        for k, v in self.__dict__.items():
            if not k.startswith("_sp_"):
                out.__dict__[k] = copy.deepcopy(v, memo)
        memo[id(self)] = out
        return out


def _rebuild(cls, shape, attrs):
    values = attrs["_sp_values"]
    return wrap(cls, shape, values.dtype, values.device, **attrs)
