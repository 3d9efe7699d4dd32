"""Assorted top-level functions of PyTorch: the arithmetic aliases divide/multiply/subtract,
predicates (is_nonzero, is_inference), tensors from buffers and files
(frombuffer, from_file, asarray), empty_permuted, nonzero_static, segment_reduce and
index_reduce.
"""

from __future__ import annotations

import builtins
import math

from flambeau import _C
from flambeau._shape_composites import repeat_interleave
from flambeau.overrides import _dispatch_on

# ---- arithmetic aliases ---------------------------------------------------------------------


@_dispatch_on("input", "other", "out")
def divide(input, other, *, rounding_mode=None, out=None):
    """Alias of div.

    >>> flambeau.divide(flambeau.tensor([7.0, -7.0]), 2)
    tensor([ 3.5000, -3.5000])
    >>> flambeau.divide(flambeau.tensor([7, -7]), 2, rounding_mode="floor")
    tensor([ 3, -4])
    """
    kwargs = {} if out is None else {"out": out}
    return _C.div(input, other, rounding_mode=rounding_mode, **kwargs)


@_dispatch_on("input", "other", "out")
def multiply(input, other, *, out=None):
    """Alias of mul.

    >>> flambeau.multiply(flambeau.tensor([1, 2, 3]), flambeau.tensor([4, 5, 6]))
    tensor([ 4, 10, 18])
    """
    return _C.mul(input, other) if out is None else _C.mul(input, other, out=out)


@_dispatch_on("input", "other", "out")
def subtract(input, other, *, alpha=1, out=None):
    """Alias of sub.

    >>> flambeau.subtract(flambeau.tensor([5.0, 5.0]), flambeau.tensor([1.0, 2.0]), alpha=2)
    tensor([3., 1.])
    """
    kwargs = {} if out is None else {"out": out}
    return _C.sub(input, other, alpha=alpha, **kwargs)


# ---- predicates -----------------------------------------------------------------------------


@_dispatch_on("input")
def is_nonzero(input) -> bool:
    """Whether a one-element tensor is nonzero.

    >>> flambeau.is_nonzero(flambeau.tensor([0.5]))
    True
    >>> flambeau.is_nonzero(flambeau.tensor(0))
    False
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


@_dispatch_on("input")
def is_inference(input) -> bool:
    """Whether ``input`` is an inference tensor: made in ``inference_mode()`` (or a view
    of one). Outside the mode such a tensor may not be updated in place, require grad
    or be saved for backward.

    >>> with flambeau.inference_mode():
    ...     x = flambeau.ones(2)
    >>> flambeau.is_inference(x), flambeau.is_inference(flambeau.ones(2))
    (True, False)
    """
    return input.is_inference()


@_dispatch_on("input")
def resolve_neg(input):
    """input itself: flambeau negates eagerly, so no tensor carries a lazy negative bit.

    >>> x = flambeau.tensor([1.0, -2.0])
    >>> flambeau.resolve_neg(x) is x
    True
    """
    return input


# ---- tensors from memory --------------------------------------------------------------------


def _numpy_dtype(dtype):
    import numpy as np

    return np.dtype(_C.empty((0,), dtype=dtype).numpy().dtype) if dtype != _C.bfloat16 else None


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing the memory of an object with the buffer protocol.

    >>> import array
    >>> buf = array.array("i", [1, 2, 3, 4])
    >>> flambeau.frombuffer(buf, dtype=flambeau.int32, count=2, offset=4)
    tensor([2, 3], dtype=flambeau.int32)
    """
    import numpy as np

    np_dtype = _numpy_dtype(dtype)
    raw = memoryview(buffer).cast("B")
    length = raw.nbytes
    itemsize = _C.empty((0,), dtype=dtype).element_size()
    if length <= 0 or offset < 0 or offset >= length:
        raise ValueError(
            f"both buffer length ({length}) and offset ({offset}) must be > 0 and "
            f"offset must be less than buffer length"
        )
    if count <= 0 and count != -1:
        raise ValueError(f"count must be a positive integer or -1, got {count}")
    if count == -1:
        if (length - offset) % itemsize:
            raise ValueError(
                f"buffer length ({length - offset} after offset) must be a multiple of element "
                f"size ({itemsize})"
            )
        count = (length - offset) // itemsize
    if offset + count * itemsize > length:
        raise ValueError(
            f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset}) must "
            f"not be greater than actual buffer length ({length})"
        )
    if np_dtype is None:  # bfloat16: read the bits as int16 and reinterpret
        arr = np.frombuffer(raw, dtype=np.int16, count=count, offset=offset)
        out = _C.from_numpy(arr).view(dtype)
    else:
        arr = np.frombuffer(raw, dtype=np_dtype, count=count, offset=offset)
        out = _C.from_numpy(arr)
    return out.requires_grad_() if requires_grad else out


def from_file(
    filename,
    shared=None,
    size=0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """size elements of dtype read from a file; with shared=True the tensor maps the file,
    so writes to it change the file.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "values.bin")
    ...     flambeau.tensor([1.0, 2.0, 3.0]).numpy().tofile(path)
    ...     x = flambeau.from_file(path, size=3, dtype=flambeau.float32)
    >>> x
    tensor([1., 2., 3.])
    """
    import numpy as np

    del layout, pin_memory
    dtype = _C.get_default_dtype() if dtype is None else dtype
    np_dtype = _numpy_dtype(dtype) or np.dtype(np.int16)
    if shared:
        arr = np.memmap(filename, dtype=np_dtype, mode="r+", shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=np_dtype, count=size)
        if arr.shape[0] < size:
            raise RuntimeError(
                f"from_file: the file {filename!r} holds {arr.shape[0]} elements, {size} asked"
            )
    out = _C.from_numpy(arr)
    if dtype == _C.bfloat16:
        out = out.view(dtype)
    if device is not None:
        out = out.to(device)
    return out.requires_grad_() if requires_grad else out


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing memory with a tensor or NumPy array when dtype and device
    allow and copy is not True; copy=False raises where a copy is needed.

    >>> import numpy as np
    >>> a = np.array([1.0, 2.0])
    >>> t = flambeau.asarray(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 2.], dtype=flambeau.float64)
    """
    if isinstance(obj, _C.Tensor):
        same = (dtype is None or obj.dtype == dtype) and (
            device is None or obj.device == _C.device(device)
        )
        if copy is False and not same:
            raise ValueError("asarray(): a copy is needed but copy=False")
        out = obj.to(device or obj.device, dtype or obj.dtype, copy=bool(copy))
    elif copy:
        out = _C.tensor(obj, dtype=dtype, device=device)
    else:
        out = _C.as_tensor(obj, dtype=dtype, device=device)
        if copy is False and hasattr(obj, "__array_interface__"):
            import numpy as np

            if out.data_ptr() != np.asarray(obj).__array_interface__["data"][0]:
                raise ValueError("asarray(): a copy is needed but copy=False")
    return out.requires_grad_() if requires_grad else out


def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """An uninitialized tensor of size whose dims lie in memory in physical_layout's order
    (outermost first).

    >>> x = flambeau.empty_permuted((2, 3, 4), (0, 2, 1))
    >>> x.shape, x.stride()
    (flambeau.Size([2, 3, 4]), (12, 1, 3))
    """
    del layout, pin_memory
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(
            f"empty_permuted: physical_layout {list(order)} must be a permutation of the "
            f"{len(size)} dims"
        )
    physical = _C.empty(tuple(size[d] for d in order), dtype=dtype, device=device)
    inverse = [order.index(d) for d in builtins.range(len(size))]
    out = physical.permute(inverse)
    return out.requires_grad_() if requires_grad else out


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) with exactly size rows: truncated, or padded with fill_value.

    >>> x = flambeau.tensor([0, 3, 0, 5, 7])
    >>> flambeau.nonzero_static(x, size=4)
    tensor([[ 1],
            [ 3],
            [ 4],
            [-1]])
    """
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    idx = _C.nonzero(input)
    n = idx.shape[0]
    if n >= size:
        return idx.narrow(0, 0, size).contiguous()
    pad = _C.full((size - n, idx.shape[1]), fill_value, dtype=idx.dtype)
    return _C.cat([idx, pad], 0)


@_dispatch_on("indices")
def unravel_index(indices, shape):
    """The coordinates in a tensor of the given shape of flat (row-major) indices, one
    tensor per dim; negative indices count from the end.

    >>> flambeau.unravel_index(flambeau.tensor([4, 5]), (2, 3))
    (tensor([1, 1]), tensor([1, 2]))
    """
    if not isinstance(indices, _C.Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    flat = _C.remainder(indices.to(_C.int64), builtins.max(math.prod(shape), 1))
    coords = []
    for size in reversed(shape):
        coords.append(_C.remainder(flat, builtins.max(size, 1)))
        flat = _C.div(flat, builtins.max(size, 1), rounding_mode="floor")
    return tuple(reversed(coords))


def set_default_tensor_type(t) -> None:
    """Deprecated in PyTorch: sets the default dtype from a CPU floating type or its name.

    >>> flambeau.set_default_tensor_type(flambeau.DoubleTensor)
    >>> flambeau.tensor([1.5]).dtype
    flambeau.float64
    >>> flambeau.set_default_tensor_type(flambeau.FloatTensor)
    """
    from flambeau._legacy_constructors import LEGACY_TYPES

    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    name = name.rsplit(".", 1)[-1]
    legacy = LEGACY_TYPES.get(name)
    if legacy is None or not legacy.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if isinstance(t, str) and t.count(".") > 1:
        raise TypeError(f"set_default_tensor_type({t!r}): flambeau's default device is the CPU")
    _C.set_default_dtype(legacy.dtype)


# ---- segment and index reductions -----------------------------------------------------------

_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf, "mean": math.nan}
_SEGMENT_SCATTER = {"sum": "sum", "prod": "prod", "max": "amax", "min": "amin", "mean": "sum"}


def _segment_reduce_1d(data, reduce, lengths, axis, initial):
    """Reduces data (segments along axis) for one row of lengths."""
    n_seg = lengths.shape[0]
    seg = repeat_interleave(_C.arange(n_seg), lengths.to(_C.int64))
    shape = [1] * data.dim()
    shape[axis] = -1
    index = seg.reshape(shape).expand(data.shape)
    out_shape = list(data.shape)
    out_shape[axis] = n_seg
    fill = _SEGMENT_EMPTY[reduce] if initial is None else initial
    base = _C.full(out_shape, fill if reduce != "mean" else 0.0, dtype=data.dtype)
    out = base.scatter_reduce(
        axis, index, data, _SEGMENT_SCATTER[reduce], include_self=initial is not None
    )
    if initial is not None and reduce == "mean":
        out = out + initial
    if reduce == "mean":
        counts = lengths.to(data.dtype).reshape(shape)
        empty = _C.full((), fill, dtype=data.dtype)
        out = _C.where(counts > 0, out / counts.clamp_min(1), empty)
    return out


@_dispatch_on("data", "lengths", "indices", "offsets")
def segment_reduce(
    data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None
):
    """Reduces (sum, mean, max, min, prod) consecutive segments of data along axis, the
    segments given by lengths or by offsets; an empty segment holds initial (or the
    reduction's identity, NaN for mean).

    >>> data = flambeau.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    >>> flambeau.segment_reduce(data, "sum", lengths=flambeau.tensor([2, 0, 3]))
    tensor([ 3.,  0., 12.])
    >>> flambeau.segment_reduce(data, "max", lengths=flambeau.tensor([2, 0, 3]))
    tensor([2., -inf, 5.])
    """
    if reduce not in _SEGMENT_EMPTY:
        raise RuntimeError(f"segment_reduce(): unsupported reduction {reduce!r}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        lengths = offsets.diff(dim=-1)
    if axis < 0:
        axis += data.dim()
    if axis != lengths.dim() - 1:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}."
        )
    if not unsafe and builtins.bool((lengths.sum(-1) != data.shape[axis]).any().item()):
        raise RuntimeError(
            "segment_reduce(): Expected all rows of lengths along axis to sum to "
            "data.size(lengths.dim()-1) when !unsafe."
        )
    if lengths.dim() == 1:
        return _segment_reduce_1d(data, reduce, lengths, axis, initial)
    # Leading dims of lengths index leading dims of data: reduce each row on its own.
    lead = tuple(lengths.shape[:-1])
    rows_l = lengths.reshape(-1, lengths.shape[-1])
    rows_d = data.reshape((-1,) + tuple(data.shape[axis:]))
    outs = [
        _segment_reduce_1d(rows_d[i], reduce, rows_l[i], 0, initial)
        for i in builtins.range(rows_l.shape[0])
    ]
    return _C.stack(outs, 0).reshape(lead + tuple(outs[0].shape))


@_dispatch_on("input", "index", "source", "out")
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """input with input[..., index[i], ...] reduced with source[..., i, ...] (out of place).

    >>> x = flambeau.ones(3)
    >>> index, source = flambeau.tensor([0, 2, 0]), flambeau.tensor([2.0, 3.0, 4.0])
    >>> flambeau.index_reduce(x, 0, index, source, "prod")
    tensor([8., 1., 3.])
    >>> flambeau.index_reduce(x, 0, index, source, "amax", include_self=False)
    tensor([4., 1., 3.])
    """
    res = input.index_reduce(dim, index, source, reduce, include_self=include_self)
    return res if out is None else out.copy_(res)


def _assert(condition, message):
    """Python's assert as a function that symbolic tracing can record (PyTorch's
    torch._assert): AssertionError(message) unless condition is true; a tensor-like
    condition (fx's Proxy) takes the call through __torch_function__.

    >>> flambeau._assert(flambeau.tensor(True), "never raised")
    >>> flambeau._assert(1 > 2, "one is not more than two")
    Traceback (most recent call last):
    AssertionError: one is not more than two
    """
    from flambeau import overrides

    if type(condition) is not _C.Tensor and overrides.has_torch_function((condition,)):
        return overrides.handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


__all__ = [
    "asarray",
    "divide",
    "empty_permuted",
    "from_file",
    "frombuffer",
    "index_reduce",
    "is_inference",
    "is_nonzero",
    "multiply",
    "nonzero_static",
    "resolve_neg",
    "segment_reduce",
    "set_default_tensor_type",
    "subtract",
    "unravel_index",
]


def install() -> None:
    T = _C.Tensor
    T.divide = divide
    T.divide_ = lambda self, other, *, rounding_mode=None: self.div_(
        other, rounding_mode=rounding_mode
    )
    T.multiply = multiply
    T.multiply_ = lambda self, other: self.mul_(other)
    T.subtract = subtract
    T.subtract_ = lambda self, other, *, alpha=1: self.sub_(other, alpha=alpha)
    T.resolve_neg = resolve_neg
    T.nonzero_static = nonzero_static
