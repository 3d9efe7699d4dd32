"""COO operations on dims: transpose, index_select, narrow_copy, select, sparse_mask,
sum and the sparse softmaxes."""

from __future__ import annotations

import flambeau
from flambeau import _complex
from flambeau._arg_checks import wrap_dim
from flambeau.sparse._base import register
from flambeau.sparse._coo import (
    OPS,
    SparseCooTensor,
    accumulate,
    coalesce,
    linear_index,
    make_coo,
    sparse_dim,
)


@register(OPS, "transpose", "swapaxes", "swapdims")
def transpose(s, dim0, dim1):
    n, sd = s.dim(), sparse_dim(s)
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    shape = list(s.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    if d0 < sd and d1 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        return make_coo(s._sp_indices[order], s._sp_values, shape, d0 == d1 and s._sp_coalesced)
    if d0 >= sd and d1 >= sd:
        values = s._sp_values.transpose(d0 - sd + 1, d1 - sd + 1)
        return make_coo(s._sp_indices, values, shape, s._sp_coalesced)
    raise RuntimeError("transpose(): can't transpose a sparse dim with a dense dim")


@register(OPS, "permute")
def permute(s, *dims):
    """The dims reordered; sparse dims stay among the sparse ones, dense among the dense,
    as PyTorch requires."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    n, sd = s.dim(), sparse_dim(s)
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    order = [wrap_dim(d, n) for d in dims]
    if sorted(order) != list(range(n)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if any((i < sd) != (d < sd) for i, d in enumerate(order)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed. Only transpositions within sparse and dense dimensions are supported."
        )
    values = s._sp_values.permute(0, *[d - sd + 1 for d in order[sd:]])
    same_order = order[:sd] == list(range(sd))
    return make_coo(
        s._sp_indices[order[:sd]],
        values,
        [s.shape[d] for d in order],
        same_order and s._sp_coalesced,
    )


@register(OPS, "t")
def t(s):
    if s.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {s.dim()}D")
    return s if s.dim() < 2 else transpose(s, 0, 1)


# T, mT, mH and H as a dense tensor's (flambeau._complex), through the sparse transpose,
# permute and conj: batches of sparse matrices transpose too.
@register(OPS, "T")
def reversed_dims(s):
    return _complex._T(s)


@register(OPS, "mT")
def matrix_transpose(s):
    return _complex._mT(s)


@register(OPS, "mH")
def matrix_adjoint(s):
    return _complex._mT(s).conj()


@register(OPS, "H")
def adjoint(s):
    if s.dim() not in (0, 2):
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {s.dim()}-D tensor."
        )
    return _complex._T(s).conj()


def _keep(s, dim, mask, shift=0, shape=None):
    """The elements where mask holds, their index along dim moved by -shift."""
    indices = s._sp_indices[:, mask].clone()
    indices[dim] -= shift
    return make_coo(indices, s._sp_values[mask], shape or s.shape, s._sp_coalesced)


@register(OPS, "index_select")
def index_select(s, dim, index):
    d, sd = wrap_dim(dim, s.dim()), sparse_dim(s)
    shape = list(s.shape)
    shape[d] = index.shape[0]
    if d >= sd:
        return make_coo(s._sp_indices, s._sp_values.index_select(d - sd + 1, index), shape)
    if index.numel() and (index.min() < -s.shape[d] or index.max() >= s.shape[d]):
        raise IndexError(f"index out of range in self (dim {d} of size {s.shape[d]})")
    index = index.remainder(s.shape[d])
    entry, position = (s._sp_indices[d].unsqueeze(1) == index.unsqueeze(0)).nonzero().unbind(1)
    indices = s._sp_indices[:, entry].clone()
    indices[d] = position
    return make_coo(indices, s._sp_values[entry], shape)


@register(OPS, "narrow_copy")
def narrow_copy(s, dim, start, length):
    d, sd = wrap_dim(dim, s.dim()), sparse_dim(s)
    if start < 0:
        start += s.shape[d]
    if not (0 <= start and start + length <= s.shape[d]):
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({s.shape[d]})."
        )
    shape = list(s.shape)
    shape[d] = length
    if d >= sd:
        values = s._sp_values.narrow(d - sd + 1, start, length).clone()
        return make_coo(s._sp_indices.clone(), values, shape, s._sp_coalesced)
    where = s._sp_indices[d]
    return _keep(s, d, (where >= start) & (where < start + length), start, shape)


@register(OPS, "select")
def select(s, dim, index):
    d, sd = wrap_dim(dim, s.dim()), sparse_dim(s)
    size = s.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(s.shape)} at "
            f"dimension {d}"
        )
    index %= size
    shape = [x for i, x in enumerate(s.shape) if i != d]
    if d >= sd:
        return make_coo(
            s._sp_indices, s._sp_values.select(d - sd + 1, index), shape, s._sp_coalesced
        )
    mask = s._sp_indices[d] == index
    if sd == 1:  # no sparse dim left: the (summed) dense row
        return s._sp_values[mask].sum(0)
    rows = [i for i in range(sd) if i != d]
    return make_coo(s._sp_indices[rows][:, mask], s._sp_values[mask], shape, s._sp_coalesced)


@register(OPS, "__getitem__")
def getitem(s, key):
    if isinstance(key, int) and not isinstance(key, bool):
        return select(s, 0, key)
    raise NotImplementedError(
        "indexing a sparse COO tensor supports an integer index only; use index_select, "
        "narrow_copy or to_dense()"
    )


def sparse_mask(dense, mask):
    """dense's elements at mask's indices, as a COO tensor with mask's pattern."""
    if not isinstance(mask, SparseCooTensor):
        raise RuntimeError("sparse_mask: expected mask to be a sparse COO tensor")
    if tuple(dense.shape) != tuple(mask.shape):
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(dense.shape)} but mask has size {list(mask.shape)}"
        )
    mask = coalesce(mask)
    return make_coo(mask._sp_indices, dense[tuple(mask._sp_indices)], mask.shape, True)


def _dims(dim, n):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return sorted({wrap_dim(d, n) for d in dims})


@register(OPS, "sum")
def sum_(s, dim=None, keepdim=False, *, dtype=None):
    """Over every dim: a dense scalar. Over all sparse dims: dense. Otherwise sparse."""
    values = s._sp_values if dtype is None else s._sp_values.to(dtype)
    if dim is None:
        return values.sum()
    sd = sparse_dim(s)
    dims = _dims(dim, s.dim())
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        values = values.sum(dense_dims, keepdim=keepdim)
    summed = [d for d in dims if d < sd]
    if len(summed) == sd and not keepdim:
        return values.sum(0)
    kept = [d for d in range(sd) if d not in summed]
    indices = s._sp_indices[kept]
    shape = [x for i, x in enumerate(s.shape) if i not in dims or keepdim]
    if keepdim:
        shape = [1 if i in dims else x for i, x in enumerate(s.shape)]
        indices = s._sp_indices.clone()
        indices[summed] = 0
    return coalesce(make_coo(indices, values, shape))


def _softmax(s, dim, dtype, log: bool):
    d, sd = wrap_dim(dim, s.dim()), sparse_dim(s)
    s = coalesce(s)
    values = s._sp_values if dtype is None else s._sp_values.to(dtype)
    if d >= sd:
        f = flambeau.log_softmax if log else flambeau.softmax
        return make_coo(s._sp_indices, f(values, d - sd + 1), s.shape, True)
    # The stored elements sharing every sparse index but dim's form one softmax group;
    # unstored elements count as -inf (they stay unstored).
    others = [i for i in range(sd) if i != d]
    sizes = [s.shape[i] for i in others]
    _, group = flambeau.unique(linear_index(s._sp_indices[others], sizes), return_inverse=True)
    n = int(group.max()) + 1 if group.numel() else 0
    shift = flambeau.zeros((n, *values.shape[1:]), dtype=values.dtype)
    shift = shift.index_reduce(0, group, values.detach(), "amax", include_self=False)
    shifted = values - shift[group]
    total = accumulate(shifted.exp(), group, n)[group]
    out = shifted - total.log() if log else shifted.exp() / total
    return make_coo(s._sp_indices, out, s.shape, True)


@register(OPS, "softmax", "_sparse_softmax")
def softmax(s, dim, dtype=None):
    return _softmax(s, dim, dtype, log=False)


@register(OPS, "log_softmax", "_sparse_log_softmax")
def log_softmax(s, dim, dtype=None):
    return _softmax(s, dim, dtype, log=True)
