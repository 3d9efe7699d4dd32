"""PyTorch's shape and indexing functions that compose the core's operators: tiling,
broadcasting, splitting, stacking, rotations, index tables (``tril_indices``,
``combinations``, ...), and ``repeat_interleave``.

Each is written with differentiable core operators (expand, index_select, cat, ...), so
gradients flow through them when flambeau-autograd is installed.
"""

from __future__ import annotations

import builtins
import itertools
import warnings

from flambeau import _C
from flambeau._arg_checks import wrap_dim
from flambeau._linalg_composites import powers
from flambeau._size import Size
from flambeau.overrides import _dispatch_on


def _int(v) -> bool:
    return isinstance(v, builtins.int) and not isinstance(v, builtins.bool)


# ---- broadcasting ---------------------------------------------------------------------------


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of the given shapes broadcast to (ints count as 1-D shapes).

    >>> flambeau.broadcast_shapes((2, 1), (1, 3), (3,))
    flambeau.Size([2, 3])
    """
    out: list[int] = []
    for i, shape in enumerate(shapes):
        shape = (shape,) if _int(shape) else tuple(shape)
        for s in shape:
            if not _int(s):
                raise RuntimeError(f"Input shapes should be of type ints, got {type(s).__name__}")
            if s < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {s}: {list(shape)}"
                )
        out = [1] * (len(shape) - len(out)) + out
        for j in range(1, len(shape) + 1):
            have, want = out[-j], shape[-j]
            if want == have or want == 1:
                continue
            if have != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {want} at {-j}! Mismatching "
                    f"argument at index {i} had {shape}; but expected shape should be "
                    f"broadcastable to {out}"
                )
            out[-j] = want
    return Size(out)


@_dispatch_on("input")
def broadcast_to(input, size):
    """input expanded (a view) to size.

    >>> flambeau.broadcast_to(flambeau.tensor([1, 2, 3]), (2, 3))
    tensor([[1, 2, 3],
            [1, 2, 3]])
    """
    return input.expand(tuple(size))


@_dispatch_on("tensors")
def broadcast_tensors(*tensors):
    """The tensors expanded (views) to their common broadcast shape.

    >>> x, y = flambeau.tensor([[1], [2]]), flambeau.tensor([10, 20, 30])
    >>> a, b = flambeau.broadcast_tensors(x, y)
    >>> a
    tensor([[1, 1, 1],
            [2, 2, 2]])
    >>> b.shape
    flambeau.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape: list[int] = []
    for t in tensors:
        # PyTorch's error names the running shape "a", the next tensor "b" and the dimension
        # counted from the left of the wider of the two.
        ndim = builtins.max(len(shape), t.dim())
        a = [1] * (ndim - len(shape)) + shape
        b = [1] * (ndim - t.dim()) + list(t.shape)
        for d, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {d}"
                )
        shape = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(t.expand(shape) for t in tensors)


@_dispatch_on("input")
def tile(input, dims):
    """input repeated dims times along each dim; dims shorter than input.dim() is padded
    with leading 1s.

    >>> flambeau.tile(flambeau.tensor([1, 2]), (2, 2))
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    dims = (dims,) if _int(dims) else tuple(dims)
    dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(dims)


# ---- at least n dims, stacking --------------------------------------------------------------


def _atleast(n: int, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        many = True
    else:
        many = len(tensors) != 1
    out = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape((1,) * n)
        elif t.dim() == 1 and n >= 2:
            t = t.unsqueeze(0)
            if n == 3:
                t = t.unsqueeze(-1)
        elif t.dim() == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return tuple(out) if many else out[0]


@_dispatch_on("tensors")
def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dim (one tensor in, one out; else a tuple).

    >>> flambeau.atleast_1d(flambeau.tensor(5.0))
    tensor([5.])
    >>> flambeau.atleast_1d(flambeau.tensor(1), flambeau.tensor([2, 3]))
    (tensor([1]), tensor([2, 3]))
    """
    return _atleast(1, tensors)


@_dispatch_on("tensors")
def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dims (a 1-D tensor becomes a row).

    >>> flambeau.atleast_2d(flambeau.tensor([1, 2, 3]))
    tensor([[1, 2, 3]])
    """
    return _atleast(2, tensors)


@_dispatch_on("tensors")
def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)).

    >>> flambeau.atleast_3d(flambeau.tensor([1, 2, 3])).shape
    flambeau.Size([1, 3, 1])
    >>> flambeau.atleast_3d(flambeau.ones(2, 3)).shape
    flambeau.Size([2, 3, 1])
    """
    return _atleast(3, tensors)


@_dispatch_on("*tensors", "out")
def column_stack(tensors, *, out=None):
    """0-D and 1-D tensors become columns, then everything is stacked horizontally.

    >>> flambeau.column_stack([flambeau.tensor([1, 2, 3]), flambeau.tensor([4, 5, 6])])
    tensor([[1, 4],
            [2, 5],
            [3, 6]])
    """
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.hstack(cols) if out is None else _C.hstack(cols, out=out)


@_dispatch_on("*tensors", "out")
def row_stack(tensors, *, out=None):
    """Alias of vstack.

    >>> flambeau.row_stack([flambeau.tensor([1, 2, 3]), flambeau.tensor([4, 5, 6])])
    tensor([[1, 2, 3],
            [4, 5, 6]])
    """
    return _C.vstack(tensors) if out is None else _C.vstack(tensors, out=out)


@_dispatch_on("tensors")
def block_diag(*tensors):
    """The tensors (0-D, 1-D as rows, or 2-D) placed along the diagonal of a zero matrix.

    >>> flambeau.block_diag(flambeau.tensor([[1, 2], [3, 4]]), flambeau.tensor([[5]]))
    tensor([[1, 2, 0],
            [3, 4, 0],
            [0, 0, 5]])
    """
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                f"{t.dim()} dimensions"
            )
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return _C.empty((1, 0))
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = _C.promote_types(dtype, b.dtype)
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(_C.constant_pad_nd(b.to(dtype), [left, right]))
        left += b.shape[1]
    return _C.cat(rows, 0)


# ---- splitting ------------------------------------------------------------------------------


def _split_along(name, input, indices_or_sections, dim, min_dims):
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
            f"tensor with {input.dim()} dimensions!"
        )
    if _int(indices_or_sections):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {indices_or_sections}!"
            )
        return _C.tensor_split(input, indices_or_sections, dim)
    return _C.tensor_split(input, list(indices_or_sections), dim)


@_dispatch_on("input")
def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-D input); an int must divide the dim evenly.

    >>> x = flambeau.arange(8).reshape(2, 4)
    >>> flambeau.hsplit(x, 2)
    (tensor([[0, 1],
            [4, 5]]), tensor([[2, 3],
            [6, 7]]))
    """
    dim = 1 if input.dim() > 1 else 0
    return _split_along("hsplit", input, indices_or_sections, dim, 1)


@_dispatch_on("input")
def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of an input with at least 2 dims.

    >>> x = flambeau.arange(8).reshape(4, 2)
    >>> flambeau.vsplit(x, [1, 3])
    (tensor([[0, 1]]), tensor([[2, 3],
            [4, 5]]), tensor([[6, 7]]))
    """
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


@_dispatch_on("input")
def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of an input with at least 3 dims.

    >>> x = flambeau.arange(8).reshape(1, 2, 4)
    >>> [t.shape for t in flambeau.dsplit(x, 2)]
    [flambeau.Size([1, 2, 2]), flambeau.Size([1, 2, 2])]
    """
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


@_dispatch_on("input")
def unsafe_chunk(input, chunks, dim=0):
    """chunk (PyTorch's unsafe variants only skip a view check flambeau does not make).

    >>> flambeau.unsafe_chunk(flambeau.arange(6), 3)
    (tensor([0, 1]), tensor([2, 3]), tensor([4, 5]))
    """
    return _C.chunk(input, chunks, dim)


@_dispatch_on("tensor")
def unsafe_split(tensor, split_size_or_sections, dim=0):
    """split (see unsafe_chunk).

    >>> flambeau.unsafe_split(flambeau.arange(5), 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    return _C.split(tensor, split_size_or_sections, dim)


# ---- rotations, products --------------------------------------------------------------------


@_dispatch_on("input")
def rot90(input, k=1, dims=(0, 1)):
    """input rotated k quarter turns in the plane of dims, from dims[0] towards dims[1].

    >>> flambeau.rot90(flambeau.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = wrap_dim(dims[0], input.dim()), wrap_dim(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


@_dispatch_on("input", "other", "out")
def inner(input, other, *, out=None):
    """The dot product over the last dims: out[i..., j...] = sum_k input[i..., k] other[j..., k].

    >>> flambeau.inner(flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([4.0, 5.0, 6.0]))
    tensor(32.)
    >>> flambeau.inner(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]), flambeau.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    if input.dim() == 0 or other.dim() == 0:
        res = _C.mul(input, other)
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(
                f"inner() the last dimension must match on both input tensors but got shapes "
                f"{list(input.shape)} and {list(other.shape)}"
            )
        res = _C.tensordot(input, other, [input.dim() - 1], [other.dim() - 1])
    return res if out is None else out.copy_(res)


@_dispatch_on("matrices")
def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices, left to right (deprecated in PyTorch for linalg.multi_dot).

    >>> a = flambeau.tensor([[1.0, 2.0]])
    >>> b = flambeau.tensor([[3.0], [4.0]])
    >>> flambeau.chain_matmul(a, b, a)
    tensor([[11., 22.]])
    """
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters.",
        UserWarning,
        stacklevel=3,
    )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead (matrix {i}).")
    res = matrices[0] if len(matrices) == 1 else matrices[0].mm(matrices[1])
    for m in matrices[2:]:
        res = res.mm(m)
    if len(matrices) == 1:
        res = res.clone()
    return res if out is None else out.copy_(res)


@_dispatch_on("input")
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal offset.

    >>> flambeau.diagflat(flambeau.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    >>> flambeau.diagflat(flambeau.tensor([1, 2]), offset=1)
    tensor([[0, 1, 0],
            [0, 0, 2],
            [0, 0, 0]])
    """
    return _C.diag(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    """Columns x**0, x**1, ..., x**(N-1) (decreasing powers unless increasing).

    >>> flambeau.vander(flambeau.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    >>> flambeau.vander(flambeau.tensor([1, 2, 3]), N=2, increasing=True)
    tensor([[1, 1],
            [1, 2],
            [1, 3]])
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _C.promote_types(x.dtype, _C.int64)
    if n == 0:
        out = _C.empty((x.shape[0], 0), dtype=dtype)
    else:
        out = powers(x.to(dtype), n)
    return out if increasing else out.flip([1])


# ---- index tables ---------------------------------------------------------------------------


def _triangle_indices(name, row, col, keep, dtype, device):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    r = _C.arange(row, device=device).unsqueeze(1)
    c = _C.arange(col, device=device).unsqueeze(0)
    idx = _C.nonzero(keep(c - r)).t()
    return idx.to(_C.int64 if dtype is None else dtype).contiguous()


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle (diagonal offset and below), row-major.

    >>> flambeau.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    del layout
    return _triangle_indices("tril", row, col, lambda d: d <= offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle (diagonal offset and above), row-major.

    >>> flambeau.triu_indices(3, 3, offset=1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    del layout
    return _triangle_indices("triu", row, col, lambda d: d >= offset, dtype, device)


@_dispatch_on("tensors")
def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, as rows (the 1-D tensor itself for one).

    >>> flambeau.cartesian_prod(flambeau.tensor([1, 2]), flambeau.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _C.meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


@_dispatch_on("input")
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of input's elements, as rows (itertools' order).

    >>> flambeau.combinations(flambeau.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty((0,), dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(builtins.range(input.shape[0]), r))
    if not rows:
        return _C.empty((0, r), dtype=input.dtype)
    index = _C.tensor(rows, dtype=_C.int64)
    return input.index_select(0, index.reshape(-1)).reshape(len(rows), r)


# ---- repeat_interleave ----------------------------------------------------------------------


def _indices_repeated(repeats, output_size=None):
    """arange(len(repeats)) with element i repeated repeats[i] times."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if repeats.numel() and builtins.int(repeats.min().item()) < 0:
        raise RuntimeError("repeats can not be negative")
    ends = repeats.to(_C.int64).cumsum(0)
    total = builtins.int(ends[-1].item()) if repeats.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError(
            f"repeat_interleave: output_size = {output_size} does not match the sum of "
            f"repeats = {total}"
        )
    return _C.searchsorted(ends, _C.arange(total), right=True)


@_dispatch_on("input", "repeats")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) of input repeated; repeats is an int, a 0-D/1-D
    integer tensor, or (the one-argument form) input itself gives the counts of arange.

    >>> flambeau.repeat_interleave(flambeau.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    >>> x = flambeau.tensor([[1, 2], [3, 4]])
    >>> flambeau.repeat_interleave(x, flambeau.tensor([1, 2]), dim=0)
    tensor([[1, 2],
            [3, 4],
            [3, 4]])
    """
    if repeats is None:
        return _indices_repeated(input, output_size)
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    dim = wrap_dim(dim, input.dim())
    if input.dim() == 0:
        input = input.reshape(1)
    size = input.shape[dim]
    if isinstance(repeats, _C.Tensor):
        if repeats.dim() == 0 or repeats.numel() == 1 and repeats.dim() == 1 and size != 1:
            repeats = repeats.reshape(1).expand(size)
        elif repeats.dim() == 1 and repeats.shape[0] != size:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.shape[0]} and input.size(0) = {size}"
            )
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        repeats = _C.full((size,), repeats, dtype=_C.int64)
    return input.index_select(dim, _indices_repeated(repeats, output_size))


def inclusive_range(
    start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, **kwargs
):
    """flambeau.range (deprecated in PyTorch): start, start + step, ... up to and including
    end, in the default float
    dtype unless dtype is given.

    >>> flambeau.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    del kwargs  # layout, out: flambeau's tensors are strided and range returns a new one
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.int((end - start) // step) + 1
    values = _C.arange(n, dtype=_C.float64, device=device) * step + start
    out = values.to(_C.get_default_dtype() if dtype is None else dtype)
    return out.requires_grad_() if requires_grad else out


__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "cartesian_prod",
    "chain_matmul",
    "column_stack",
    "combinations",
    "diagflat",
    "dsplit",
    "hsplit",
    "inner",
    "repeat_interleave",
    "rot90",
    "row_stack",
    "tile",
    "tril_indices",
    "triu_indices",
    "unsafe_chunk",
    "unsafe_split",
    "vander",
    "vsplit",
]

# Tensor methods PyTorch has for these (self is the first argument).
METHODS = (
    "broadcast_to",
    "diagflat",
    "dsplit",
    "hsplit",
    "inner",
    "repeat_interleave",
    "rot90",
    "unsafe_chunk",
    "unsafe_split",
    "vsplit",
)


def _tile_method(self, *dims, **kwargs):
    """Tensor.tile: dims as one sequence or as separate ints (x.tile(2, 2))."""
    if "dims" in kwargs:
        return tile(self, kwargs.pop("dims"), **kwargs)
    if len(dims) == 1 and not _int(dims[0]):
        dims = dims[0]
    return tile(self, dims, **kwargs)


def install() -> None:
    T = _C.Tensor
    g = globals()
    for name in METHODS:
        setattr(T, name, g[name])
    T.tile = _tile_method
    T.repeat_interleave = lambda self, repeats, dim=None, *, output_size=None: repeat_interleave(
        self, repeats, dim, output_size=output_size
    )
