"""The ``*_copy`` functions (each view operator followed by a contiguous copy) and the
``*_scatter`` functions (input with one of its views replaced by src, out of place).

The scatters write src through ``index_copy`` on the flattened input, at the positions the
same view takes of an index tensor, so they are differentiable in input and src.
"""

from __future__ import annotations

from flambeau import _C


def _copy_of(view_fn, doc):
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

    copy.__doc__ = f"{doc}, as a new contiguous tensor (not a view)."
    return copy


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


alias_copy = _copy_of(lambda t: t, "input itself")
as_strided_copy = _copy_of(_C.as_strided, "as_strided(input, size, stride, storage_offset)")
detach_copy = _copy_of(_C.detach, "input detached from the graph")
diagonal_copy = _copy_of(_C.diagonal, "diagonal(input, offset, dim1, dim2)")
expand_copy = _copy_of(lambda t, size, implicit=False: t.expand(tuple(size)), "input.expand(size)")
narrow_copy = _copy_of(_C.narrow, "narrow(input, dim, start, length)")
permute_copy = _copy_of(_C.permute, "permute(input, dims)")
select_copy = _copy_of(_C.select, "select(input, dim, index)")
slice_copy = _copy_of(_slice, "input[start:end:step] along dim")
split_copy = _copy_of(_C.split, "split(input, split_size, dim)")
split_with_sizes_copy = _copy_of(_split_with_sizes, "split(input, split_sizes, dim)")
squeeze_copy = _copy_of(_C.squeeze, "squeeze(input, dim)")
t_copy = _copy_of(_C.t, "t(input)")
transpose_copy = _copy_of(_C.transpose, "transpose(input, dim0, dim1)")
unbind_copy = _copy_of(_C.unbind, "unbind(input, dim)")
unfold_copy = _copy_of(
    lambda t, dimension, size, step: t.unfold(dimension, size, step),
    "input.unfold(dimension, size, step)",
)
unsqueeze_copy = _copy_of(_C.unsqueeze, "unsqueeze(input, dim)")
view_as_complex_copy = _copy_of(_C.view_as_complex, "view_as_complex(input)")
view_as_real_copy = _copy_of(_C.view_as_real, "view_as_real(input)")
view_copy = _copy_of(lambda t, *shape: t.view(*shape), "input.view(shape) (or .view(dtype))")


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


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[start:end:step] along dim replaced by src."""
    return _scatter_into_view(
        "slice_scatter", input, src, lambda t: _slice(t, dim, start, end, step)
    )


def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src."""
    return _scatter_into_view("select_scatter", input, src, lambda t: t.select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal(offset, dim1, dim2) replaced by src."""
    return _scatter_into_view(
        "diagonal_scatter", input, src, lambda t: t.diagonal(offset, dim1, dim2)
    )


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input with as_strided(size, stride, storage_offset) of its contiguous copy replaced
    by src."""
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
