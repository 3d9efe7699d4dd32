"""The ``*_copy`` functions (each view operator followed by a contiguous copy) and the
``*_scatter`` functions (input with one of its views replaced by src, out of place).

The scatters write src through ``index_copy`` on the flattened input, at the positions the
same view takes of an index tensor, so they are differentiable in input and src.
"""

from __future__ import annotations

from flambeau import _C
from flambeau.overrides import _dispatch_on


def _copy_of(name, view_fn, doc, example):
    def copy(input, *args, out=None, **kwargs):
        res = view_fn(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):
            res = tuple(r.clone(memory_format=_C.contiguous_format) for r in res)
            if out is not None:
                for o, r in zip(out, res):
                    o.copy_(r)
            return res
        res = res.clone(memory_format=_C.contiguous_format)
        return res if out is None else out.copy_(res)

    copy.__doc__ = f"{doc}, as a new contiguous tensor (not a view).\n\n{example}"
    copy.__name__ = copy.__qualname__ = name
    return _dispatch_on("input", "out")(copy)


def _slice(input, dim=0, start=None, end=None, step=1):
    n = input.shape[dim]
    start, end, step = slice(start, end, step).indices(n)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    return input[tuple(index)]


def _split_with_sizes(input, split_sizes, dim=0):
    return _C.split(input, list(split_sizes), dim)


alias_copy = _copy_of(
    "alias_copy",
    lambda t: t,
    "input itself",
    """\
>>> x = flambeau.tensor([1, 2, 3])
>>> y = flambeau.alias_copy(x)
>>> y, y.data_ptr() == x.data_ptr()
(tensor([1, 2, 3]), False)
""",
)
as_strided_copy = _copy_of(
    "as_strided_copy",
    _C.as_strided,
    "as_strided(input, size, stride, storage_offset)",
    """\
>>> x = flambeau.arange(6)
>>> flambeau.as_strided_copy(x, (2, 2), (3, 1))
tensor([[0, 1],
        [3, 4]])
""",
)
detach_copy = _copy_of(
    "detach_copy",
    _C.detach,
    "input detached from the graph",
    """\
>>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
>>> flambeau.detach_copy(x)
tensor([1., 2.])
""",
)
diagonal_copy = _copy_of(
    "diagonal_copy",
    _C.diagonal,
    "diagonal(input, offset, dim1, dim2)",
    """\
>>> flambeau.diagonal_copy(flambeau.tensor([[1, 2], [3, 4]]))
tensor([1, 4])
""",
)
expand_copy = _copy_of(
    "expand_copy",
    lambda t, size, implicit=False: t.expand(tuple(size)),
    "input.expand(size)",
    """\
>>> flambeau.expand_copy(flambeau.tensor([[1], [2]]), (2, 3))
tensor([[1, 1, 1],
        [2, 2, 2]])
""",
)
narrow_copy = _copy_of(
    "narrow_copy",
    _C.narrow,
    "narrow(input, dim, start, length)",
    """\
>>> flambeau.narrow_copy(flambeau.arange(6), 0, 1, 3)
tensor([1, 2, 3])
""",
)
permute_copy = _copy_of(
    "permute_copy",
    _C.permute,
    "permute(input, dims)",
    """\
>>> y = flambeau.permute_copy(flambeau.arange(6).reshape(2, 3), (1, 0))
>>> y, y.is_contiguous()
(tensor([[0, 3],
        [1, 4],
        [2, 5]]), True)
""",
)
select_copy = _copy_of(
    "select_copy",
    _C.select,
    "select(input, dim, index)",
    """\
>>> flambeau.select_copy(flambeau.tensor([[1, 2], [3, 4]]), 1, 0)
tensor([1, 3])
""",
)
slice_copy = _copy_of(
    "slice_copy",
    _slice,
    "input[start:end:step] along dim",
    """\
>>> flambeau.slice_copy(flambeau.arange(6), 0, 1, 5, 2)
tensor([1, 3])
""",
)
split_copy = _copy_of(
    "split_copy",
    _C.split,
    "split(input, split_size, dim)",
    """\
>>> flambeau.split_copy(flambeau.arange(5), 2)
(tensor([0, 1]), tensor([2, 3]), tensor([4]))
""",
)
split_with_sizes_copy = _copy_of(
    "split_with_sizes_copy",
    _split_with_sizes,
    "split(input, split_sizes, dim)",
    """\
>>> flambeau.split_with_sizes_copy(flambeau.arange(5), [1, 4])
(tensor([0]), tensor([1, 2, 3, 4]))
""",
)
squeeze_copy = _copy_of(
    "squeeze_copy",
    _C.squeeze,
    "squeeze(input, dim)",
    """\
>>> flambeau.squeeze_copy(flambeau.zeros(2, 1, 3)).shape
flambeau.Size([2, 3])
""",
)
t_copy = _copy_of(
    "t_copy",
    _C.t,
    "t(input)",
    """\
>>> y = flambeau.t_copy(flambeau.tensor([[1, 2, 3]]))
>>> y, y.is_contiguous()
(tensor([[1],
        [2],
        [3]]), True)
""",
)
transpose_copy = _copy_of(
    "transpose_copy",
    _C.transpose,
    "transpose(input, dim0, dim1)",
    """\
>>> flambeau.transpose_copy(flambeau.tensor([[1, 2], [3, 4]]), 0, 1)
tensor([[1, 3],
        [2, 4]])
""",
)
unbind_copy = _copy_of(
    "unbind_copy",
    _C.unbind,
    "unbind(input, dim)",
    """\
>>> flambeau.unbind_copy(flambeau.tensor([[1, 2], [3, 4]]))
(tensor([1, 2]), tensor([3, 4]))
""",
)
unfold_copy = _copy_of(
    "unfold_copy",
    lambda t, dimension, size, step: t.unfold(dimension, size, step),
    "input.unfold(dimension, size, step)",
    """\
>>> flambeau.unfold_copy(flambeau.arange(5), 0, 2, 1)
tensor([[0, 1],
        [1, 2],
        [2, 3],
        [3, 4]])
""",
)
unsqueeze_copy = _copy_of(
    "unsqueeze_copy",
    _C.unsqueeze,
    "unsqueeze(input, dim)",
    """\
>>> flambeau.unsqueeze_copy(flambeau.tensor([1, 2]), 1)
tensor([[1],
        [2]])
""",
)
view_as_complex_copy = _copy_of(
    "view_as_complex_copy",
    _C.view_as_complex,
    "view_as_complex(input)",
    """\
>>> flambeau.view_as_complex_copy(flambeau.tensor([[1.0, 2.0], [3.0, -1.0]]))
tensor([1.+2.j, 3.-1.j])
""",
)
view_as_real_copy = _copy_of(
    "view_as_real_copy",
    _C.view_as_real,
    "view_as_real(input)",
    """\
>>> flambeau.view_as_real_copy(flambeau.tensor([1 + 2j, 3 - 1j]))
tensor([[ 1.,  2.],
        [ 3., -1.]])
""",
)
view_copy = _copy_of(
    "view_copy",
    lambda t, *shape: t.view(*shape),
    "input.view(shape) (or .view(dtype))",
    """\
>>> flambeau.view_copy(flambeau.arange(6), (3, 2))
tensor([[0, 1],
        [2, 3],
        [4, 5]])
""",
)


def _scatter_into_view(name, input, src, view_of):
    """input with view_of(input) replaced by src (out of place)."""
    positions = view_of(_C.arange(input.numel()).reshape(input.shape))
    if tuple(positions.shape) != tuple(src.shape):
        raise RuntimeError(
            f"{name}: expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(positions.shape)}"
        )
    flat = input.reshape(-1).index_copy(0, positions.reshape(-1), src.to(input.dtype).reshape(-1))
    return flat.reshape(input.shape)


@_dispatch_on("input", "src")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[start:end:step] along dim replaced by src.

    >>> x = flambeau.zeros(4, dtype=flambeau.int64)
    >>> flambeau.slice_scatter(x, flambeau.tensor([7, 8]), start=1, end=4, step=2)
    tensor([0, 7, 0, 8])
    """
    return _scatter_into_view(
        "slice_scatter", input, src, lambda t: _slice(t, dim, start, end, step)
    )


@_dispatch_on("input", "src")
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src.

    >>> x = flambeau.zeros(2, 2)
    >>> flambeau.select_scatter(x, flambeau.tensor([1.0, 2.0]), 0, 1)
    tensor([[0., 0.],
            [1., 2.]])
    """
    return _scatter_into_view("select_scatter", input, src, lambda t: t.select(dim, index))


@_dispatch_on("input", "src")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal(offset, dim1, dim2) replaced by src.

    >>> flambeau.diagonal_scatter(flambeau.zeros(3, 3), flambeau.tensor([1.0, 2.0]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.],
            [0., 0., 0.]])
    """
    return _scatter_into_view(
        "diagonal_scatter", input, src, lambda t: t.diagonal(offset, dim1, dim2)
    )


@_dispatch_on("input", "src")
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input with as_strided(size, stride, storage_offset) of its contiguous copy replaced
    by src.

    >>> x = flambeau.zeros(6)
    >>> flambeau.as_strided_scatter(x, flambeau.ones(2, 2), (2, 2), (3, 1))
    tensor([1., 1., 0., 1., 1., 0.])
    """
    offset = 0 if storage_offset is None else storage_offset
    return _scatter_into_view(
        "as_strided_scatter", input, src, lambda t: t.as_strided(size, stride, offset)
    )


__all__ = [
    "alias_copy",
    "as_strided_copy",
    "as_strided_scatter",
    "detach_copy",
    "diagonal_copy",
    "diagonal_scatter",
    "expand_copy",
    "narrow_copy",
    "permute_copy",
    "select_copy",
    "select_scatter",
    "slice_copy",
    "slice_scatter",
    "split_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_as_complex_copy",
    "view_as_real_copy",
    "view_copy",
]


def install() -> None:
    T = _C.Tensor
    for name in (
        "as_strided_scatter",
        "diagonal_scatter",
        "narrow_copy",
        "select_scatter",
        "slice_scatter",
    ):
        setattr(T, name, globals()[name])
