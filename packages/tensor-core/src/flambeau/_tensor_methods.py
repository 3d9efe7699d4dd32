"""Tensor attributes and small methods of PyTorch's Tensor that need no kernel: device and
layout predicates, ``get_device``, ``dim_order``, the ``new_*`` factories,
``sum_to_size``, ``apply_``/``map_``, ``put``/``put_``, ``index_reduce_``,
``split_with_sizes``, and ``in``/``reversed()`` of a tensor.

flambeau tensors are dense, strided, unquantized and never inference tensors, so the
predicates for other layouts and devices are plain False; a tensor on a plugin device
answers ``is_<its type>`` by its device.
"""

from __future__ import annotations

import builtins
import numbers
import warnings

from flambeau import _C
from flambeau._arg_checks import wrap_dim
from flambeau._dtype_aliases import strided
from flambeau.overrides import _dispatch_on

# Layout/representation predicates no flambeau tensor can satisfy.
_ALWAYS_FALSE = (
    "is_mkldnn",
    "is_quantized",
    "is_nested",
    "is_sparse",
    "is_sparse_csr",
)
# Device predicates: true for a tensor on that device type (one from a backend plugin).
_DEVICE_PREDICATES = ("xpu", "mps", "ipu", "maia", "mtia", "xla", "vulkan", "meta")


def _device_predicate(device_type: str):
    return property(
        lambda self: self.device.type == device_type,
        doc=f"True for a tensor on a {device_type!r} device.",
    )


def _get_device(self) -> int:
    """-1 for a CPU tensor, else the index of its device."""
    if self.device.type == "cpu":
        return -1
    index = self.device.index
    return 0 if index is None else index


def _is_signed(self) -> bool:
    return self.dtype.is_signed


@_dispatch_on("self", method="dim_order")
def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (largest stride first; ties keep
    dim order)."""
    if ambiguity_check is not False and not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def _volatile(self) -> bool:
    warnings.warn(
        "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
    )
    return False


def _size_args(size):
    """new_zeros(2, 3) and new_zeros((2, 3)) name the same shape."""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        return tuple(size[0])
    return tuple(size)


def _like(self, dtype, device):
    return (self.dtype if dtype is None else dtype), (self.device if device is None else device)


def _new_factory(factory):
    def new(self, *size, dtype=None, device=None, requires_grad=False, layout=None, **kwargs):
        kwargs.pop("pin_memory", None)
        _check_layout(layout)
        dtype, device = _like(self, dtype, device)
        return factory(_size_args(size), dtype=dtype, device=device, requires_grad=requires_grad)

    new.__name__ = f"new_{factory.__name__}"
    new.__doc__ = f"A {factory.__name__} tensor with self's dtype and device unless given."
    return new


def _check_layout(layout) -> None:
    if layout is not None and layout is not strided:
        raise RuntimeError(f"flambeau tensors are strided; layout={layout!r} is not supported")


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
    """A tensor of the given size filled with fill_value, with self's dtype and device."""
    _check_layout(kw.pop("layout", None))
    dtype, device = _like(self, dtype, device)
    return _C.full(tuple(size), fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kw):
    """A copy of data with self's dtype and device unless given."""
    _check_layout(kw.pop("layout", None))
    dtype, device = _like(self, dtype, device)
    if isinstance(data, _C.Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        out = data.detach().to(device, dtype, copy=True)
        return out.requires_grad_(requires_grad) if requires_grad else out
    return _C.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    """An uninitialized tensor of the given sizes and strides, with self's dtype and device."""
    _check_layout(kw.pop("layout", None))
    dtype, device = _like(self, dtype, device)
    return _C.empty_strided(
        tuple(size), tuple(stride), dtype=dtype, device=device, requires_grad=requires_grad
    )


def _sum_to_size(self, *size):
    """self summed over the dims broadcasting expanded, so that the result has ``size``."""
    size = _size_args(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    expandable = lead >= 0 and all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not expandable:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self
    if lead:
        out = out.sum(tuple(range(lead)))
    reduce = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    if reduce:
        out = out.sum(reduce, keepdim=True)
    return out


def _check_python_map(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if self.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            "instead."
        )


def _apply_(self, callable):
    """Replaces each element x by callable(x) (a Python loop: slow, CPU only)."""
    _check_python_map(self, "apply_")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(_C.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, tensor, callable):
    """Replaces each element x by callable(x, y), y the element of tensor broadcast to self."""
    _check_python_map(self, "map_")
    other = tensor.expand(self.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(_C.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _flat_coordinates(self, index):
    """The coordinates in self of flat (row-major) indices, negative ones counted from the end."""
    n = self.numel()
    if index.dtype != _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    flat = index.reshape(-1)
    if flat.numel():
        lo, hi = builtins.int(flat.min().item()), builtins.int(flat.max().item())
        bad = hi if hi >= n else lo if lo < -n else None
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {n} elements."
            )
    flat = _C.remainder(flat, builtins.max(n, 1))
    coords = []
    for size in reversed(tuple(self.shape)):
        coords.append(_C.remainder(flat, size))
        flat = _C.div(flat, size, rounding_mode="floor")
    return tuple(reversed(coords))


def _put_(self, index, source, accumulate=False):
    """Writes source into self at flat (row-major) indices; accumulate adds instead."""
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    if self.dim() == 0:
        coords = _flat_coordinates(self.reshape(1), index)
        self.reshape(1).index_put_(coords, source.reshape(-1).to(self.dtype), accumulate)
        return self
    coords = _flat_coordinates(self, index)
    return self.index_put_(coords, source.reshape(-1).to(self.dtype), accumulate)


def _put(self, index, source, accumulate=False):
    return _put_(self.clone(), index, source, accumulate)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """self[..., index[i], ...] reduced (prod/mean/amax/amin) with source[..., i, ...]."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    dim = wrap_dim(dim, self.dim())
    src_dim_size = source.shape[dim] if source.dim() else 1
    if index.numel() != src_dim_size:
        raise IndexError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    if self.dim() == 0:
        return self.copy_(
            _index_reduce_(
                self.reshape(1), 0, index, source.reshape(1), reduce, include_self=include_self
            ).reshape(())
        )
    shape = [1] * source.dim()
    shape[dim] = -1
    expanded = index.reshape(shape).expand(source.shape)
    return self.scatter_reduce_(dim, expanded, source, reduce, include_self=include_self)


def _index_reduce(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce_(self.clone(), dim, index, source, reduce, include_self=include_self)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal (all dims equal beyond 2-D); a tall matrix with wrap=True
    restarts the diagonal every cols + 1 rows, as NumPy's fill_diagonal."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = shape
        n = rows if wrap else builtins.min(rows, cols)
        flat = [i * (cols + 1) for i in builtins.range(n) if i * (cols + 1) < rows * cols]
    else:
        step = builtins.sum(shape[0] ** k for k in builtins.range(self.dim()))
        flat = [i * step for i in builtins.range(shape[0])]
    index = _C.tensor(flat, dtype=_C.int64)
    return _put_(self, index, _C.full((len(flat),), fill_value, dtype=self.dtype))


@_dispatch_on("self", method="__contains__")
def _contains(self, element) -> bool:
    """``element in tensor``: whether any entry equals `element` (a scalar, or a tensor
    broadcast against the tensor), as PyTorch's Tensor.__contains__.

    >>> 5 in flambeau.tensor([[1, 2], [5, 6]])
    True
    """
    if isinstance(element, (_C.Tensor, numbers.Number)):
        return builtins.bool((element == self).any().item())
    raise RuntimeError(
        f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
    )


@_dispatch_on("self", method="__reversed__")
def _reversed(self):
    """``reversed(tensor)``: the tensor flipped along its first dim (a 0-d tensor itself).

    >>> reversed(flambeau.tensor([1, 2, 3]))
    tensor([3, 2, 1])
    """
    return self if self.dim() == 0 else self.flip(0)


def _split_with_sizes(self, split_sizes, dim=0):
    """Splits along `dim` into pieces of the given sizes, which must add up to its size.

    >>> flambeau.arange(5).split_with_sizes([2, 3])
    (tensor([0, 1]), tensor([2, 3, 4]))
    """
    sizes = [builtins.int(s) for s in split_sizes]
    dim = wrap_dim(dim, self.dim())
    if builtins.sum(sizes) != self.shape[dim] or builtins.any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes to sum exactly to "
            f"{self.shape[dim]} (input tensor's size at dimension {dim}), but got "
            f"split_sizes={sizes}"
        )
    return self.split(sizes, dim)


def install() -> None:
    T = _C.Tensor
    T.__contains__ = _contains
    T.__reversed__ = _reversed
    T.split_with_sizes = _split_with_sizes
    for name in _ALWAYS_FALSE:
        setattr(T, name, property(lambda self: False))
    T.is_neg = lambda self: False  # flambeau negates eagerly: no lazy negative bit
    for device_type in _DEVICE_PREDICATES:
        setattr(T, f"is_{device_type}", _device_predicate(device_type))
    T.layout = property(lambda self: strided, doc="flambeau.strided: every tensor is dense.")
    T.get_device = _get_device
    T.is_signed = _is_signed
    T.dim_order = _dim_order
    T.const_data_ptr = lambda self: self.data_ptr()
    T.name = None
    T.volatile = property(_volatile)
    T.new_zeros = _new_factory(_C.zeros)
    T.new_ones = _new_factory(_C.ones)
    T.new_empty = _new_factory(_C.empty)
    T.new_full = _new_full
    T.new_tensor = _new_tensor
    T.new_empty_strided = _new_empty_strided
    T.sum_to_size = _sum_to_size
    T.apply_ = _apply_
    T.map_ = _map_
    T.put_ = _put_
    T.put = _put
    T.index_reduce_ = _index_reduce_
    T.index_reduce = _index_reduce
    T.fill_diagonal_ = _fill_diagonal_
    T.cfloat = lambda self: self.to(_C.complex64)
    T.cdouble = lambda self: self.to(_C.complex128)
    T.chalf = lambda self, memory_format=_C.preserve_format: self.to(
        _C.complex32, memory_format=memory_format
    )
