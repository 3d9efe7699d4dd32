"""Formulas of views, shape operators and conversions; non-differentiable operators."""

from __future__ import annotations

import flambeau as F

from ..graph import zeros_for_none
from .helpers import first_name, scattered_into, sum_to
from .registry import composite, formula, nondifferentiable


@formula(
    "view",
    "reshape",
    "flatten",
    "unflatten",
    "view_as",
    "reshape_as",
    "ravel",
    "squeeze",
    "unsqueeze",
    "expand",
    "expand_as",
    needs_input=False,
    reads={"self": (), "input": ()},  # only shapes
    nondiff_inputs=("other",),  # view_as, reshape_as, expand_as: only other's shape
)
def _reshape_back(g, a):
    first = first_name(a)
    x = a[first]
    return {first: sum_to(g, x.shape) if g.numel() != x.numel() else g.reshape(tuple(x.shape))}


@formula("transpose", "swapaxes", "swapdims", needs_input=False, reads={"input": ()})
def _transpose(g, a):
    first = first_name(a)
    d0 = a.get("dim0", a.get("axis0"))
    d1 = a.get("dim1", a.get("axis1"))
    return {first: g.transpose(d0, d1)}


@formula("t", needs_input=False, reads={"input": ()})
def _t(g, a):
    first = first_name(a)
    return {first: g.t()}


@formula("permute", needs_input=False, reads={"input": ()})
def _permute(g, a):
    first = first_name(a)
    dims = [d % g.dim() for d in a["dims"]]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return {first: g.permute(inverse)}


@formula("movedim", "moveaxis", needs_input=False)
def _movedim(g, a):
    first = first_name(a)
    return {first: g.movedim(a["destination"], a["source"])}


@formula("narrow")
def _narrow(g, a):
    x = a["input"]
    return {"input": scattered_into(g, x, lambda z: z.narrow(a["dim"], a["start"], a["length"]))}


@formula("select")
def _select(g, a):
    first = first_name(a)
    x = a[first]
    return {first: scattered_into(g, x, lambda z: z.select(a["dim"], a["index"]))}


@formula("diagonal")
def _diagonal(g, a):
    x = a["input"]
    return {
        "input": scattered_into(
            g, x, lambda z: z.diagonal(a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
        )
    }


@formula("__getitem__")
def _getitem(g, a):
    x = a["self"]
    z = F.zeros(tuple(x.shape), dtype=g.dtype)
    z[a["indices"]] = g
    return {"self": z}


@formula("__setitem__", needs_input=False)
def _setitem(g, a):
    kept = g.clone()
    kept[a["indices"]] = 0  # overwritten elements get no gradient from before
    out = {"self": kept}
    if isinstance(a["value"], F.Tensor):
        out["value"] = g[a["indices"]]
    return out


@formula("cat", "concat", "concatenate", needs_input=False)
def _cat(g, a):
    tensors, dim = a["tensors"], a["axis"] if "axis" in a else a["dim"]  # concatenate: axis
    grads, start = [], 0
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0 and g.dim() > 1:
            grads.append(None)
            continue
        n = t.shape[dim]
        grads.append(g.narrow(dim, start, n))
        start += n
    return {"tensors": grads}


@formula("stack", needs_input=False)
def _stack(g, a):
    return {"tensors": list(g.unbind(a.get("dim", 0)))}


def _join_grads(g, a, dim):
    return F.cat(zeros_for_none(g, a["results"]), dim)


@formula("split", "chunk", "tensor_split", needs_input=False)
def _split(g, a):
    first = first_name(a)
    return {first: _join_grads(g, a, a.get("dim", 0))}


@formula("tensor_split.indices", needs_input=False)
def _tensor_split_at(g, a):
    """Pieces x[i_{k-1}:i_k]: with decreasing indices they overlap (tensor_split(x, [5, 2])
    gives x[:5], x[5:2] and x[2:]), so each piece's gradient is added where it came from."""
    x, dim = a["input"], a.get("dim", 0)
    n = x.shape[dim]
    starts = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in a["indices_or_sections"]]
    pieces = a["results"]
    if all(s + p.shape[dim] == t for s, p, t in zip(starts, pieces, starts[1:])):
        return {"input": _join_grads(g, a, dim)}  # consecutive: the pieces tile the input
    grad = F.zeros(tuple(x.shape), dtype=pieces[0].dtype)
    for start, piece, gk in zip(starts, pieces, g):
        if gk is not None and piece.shape[dim]:
            grad = grad.index_add(dim, F.arange(start, start + piece.shape[dim]), gk)
    return {"input": grad}


@formula("unbind", needs_input=False)
def _unbind(g, a):
    return {first_name(a): F.stack(zeros_for_none(g, a["results"]), a.get("dim", 0))}


@formula("flip", needs_input=False)
def _flip(g, a):
    return {"input": g.flip(a["dims"])}


@formula("fliplr", needs_input=False)
def _fliplr(g, a):
    return {"input": g.flip([1])}


@formula("flipud", needs_input=False)
def _flipud(g, a):
    return {"input": g.flip([0])}


@formula("diag")
def _diag(g, a):
    x, k = a["input"], a.get("diagonal", 0)
    if x.dim() == 1:  # the vector became a matrix's diagonal
        return {"input": g.diagonal(k)}
    return {"input": scattered_into(g, x, lambda z: z.diagonal(k))}


@formula("diag_embed", needs_input=False)
def _diag_embed(g, a):
    return {"input": g.diagonal(a.get("offset", 0), a.get("dim1", -2), a.get("dim2", -1))}


@formula("unfold")
def _unfold(g, a):
    """Each window element goes back to where it came from; overlapping windows add up."""
    x, d, size, step = a["self"], a["dimension"], a["size"], a["step"]
    if x.dim() == 0:
        return {"self": g.sum()}
    d %= x.dim()
    windows = g.shape[d]
    starts = (F.arange(windows) * step).unsqueeze(1)
    index = (starts + F.arange(size).unsqueeze(0)).reshape(-1)
    flat = g.movedim(-1, d + 1).flatten(d, d + 1)
    return {"self": F.zeros(tuple(x.shape), dtype=g.dtype).index_add(d, index, flat)}


def _storage_positions(shape, stride, offset):
    """The storage position of every element of a strided view, flattened (row-major)."""
    pos = F.full((), offset, dtype=F.int64)
    for d, (n, s) in enumerate(zip(shape, stride)):
        along = [1] * len(shape)
        along[d] = n
        pos = pos + (F.arange(n) * s).reshape(along)
    return pos.expand(tuple(shape)).reshape(-1)


@formula("as_strided")
def _as_strided(g, a):
    """Gradients meet in storage: every output element adds into its storage position and
    every input element reads its own (shared equally when the input itself overlaps)."""
    x = a["input"]
    offset = a["storage_offset"] if a.get("storage_offset") is not None else x.storage_offset()
    out_pos = _storage_positions(a["size"], a["stride"], offset)
    in_pos = _storage_positions(tuple(x.shape), x.stride(), x.storage_offset())
    if x.numel() == 0 or g.numel() == 0:
        return {"input": F.zeros(tuple(x.shape), dtype=g.dtype)}
    low = min(int(out_pos.min()), int(in_pos.min()))
    length = max(int(out_pos.max()), int(in_pos.max())) - low + 1
    out_pos, in_pos = out_pos - low, in_pos - low
    acc = F.zeros(length, dtype=g.dtype).index_add(0, out_pos, g.reshape(-1))
    grad = acc.index_select(0, in_pos)
    count = F.zeros(length, dtype=F.int64).index_add(0, in_pos, F.ones_like(in_pos))
    if int(count.max()) > 1:
        grad = grad / count.index_select(0, in_pos).to(grad.dtype)
    return {"input": grad.reshape(tuple(x.shape))}


def _reshaped(call, t, ndim):
    """t as numpy's atleast_{1,2,3}d gives it."""
    if t.dim() >= ndim:
        return t
    if t.dim() == 0:
        return call("reshape", t, [1] * ndim)
    if ndim == 2 or t.dim() == 1:  # (n) -> (1, n) or (1, n, 1)
        t = call("unsqueeze", t, 0)
    return call("unsqueeze", t, -1) if ndim == 3 else t


@composite("hstack")
def _hstack(call, a):
    ts = [_reshaped(call, t, 1) for t in a["tensors"]]
    return call("cat", ts, 0 if ts and ts[0].dim() == 1 else 1)


@composite("vstack")
def _vstack(call, a):
    return call("cat", [_reshaped(call, t, 2) for t in a["tensors"]], 0)


@composite("dstack")
def _dstack(call, a):
    return call("cat", [_reshaped(call, t, 3) for t in a["tensors"]], 2)


@composite("meshgrid")
def _meshgrid(call, a):
    ts = list(a["tensors"])
    sizes = [t.numel() for t in ts]
    # 'xy' (Cartesian) indexing swaps the roles of the first two inputs.
    order = list(range(len(ts)))
    if a.get("indexing") == "xy" and len(ts) >= 2:
        order[0], order[1] = 1, 0
    shape = [sizes[i] for i in order]
    grids = []
    for i, t in enumerate(ts):
        along = [1] * len(ts)
        along[order.index(i)] = sizes[i]
        grids.append(call("expand", call("reshape", t, along), shape))
    return tuple(grids)


@formula("roll", needs_input=False)
def _roll(g, a):
    shifts, dims = a["shifts"], a.get("dims")
    neg = [-s for s in shifts] if isinstance(shifts, (list, tuple)) else -shifts
    return {"input": g.roll(neg, dims) if dims is not None else g.roll(neg)}


@formula("repeat", needs_input=False)
def _repeat(g, a):
    first = first_name(a)
    reps = a["repeats"]
    x, reps = a[first], [reps] if isinstance(reps, int) else list(reps)
    shape = [1] * (len(reps) - x.dim()) + list(x.shape)
    split = []
    for r, s in zip(reps, shape):
        split += [r, s]
    summed = g.reshape(split).sum(dim=tuple(range(0, len(split), 2)))
    return {first: summed.reshape(tuple(x.shape))}


@formula("tril", needs_input=False)
def _tril(g, a):
    return {"input": g.tril(a.get("diagonal", 0))}


@formula("triu", needs_input=False)
def _triu(g, a):
    return {"input": g.triu(a.get("diagonal", 0))}


@formula(
    "to",
    "type_as",
    "float",
    "double",
    "half",
    "bfloat16",
    "cpu",
    needs_input=False,
    reads={"self": ()},  # only the first's dtype
    nondiff_inputs=("other",),  # type_as, to(other): only other's dtype and device
)
def _to(g, a):
    first = first_name(a)
    return {first: g.to(a[first].dtype)}


@formula("copy_", needs_input=False)
def _copy(g, a):
    src = a["src"]
    return {"self": g * 0, "src": g.to(src.dtype)}


@formula("fill_", "zero_", needs_input=False)
def _fill(g, a):
    return {"self": g * 0}


# Reinterpreting bytes as another dtype has no derivative; neither do tensors
# that only borrow another's shape.
nondifferentiable(
    "view.dtype",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "argmax",
    "argmin",
    "count_nonzero",
    "all",
    "any",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isclose",
    "floor_divide",
    "detach",
    "long",
    "int",
    "bool",
    "short",
    "char",
    "byte",
    "linalg_matrix_rank",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "allclose",
    "equal",
    "isreal",
    "is_conj",
)
