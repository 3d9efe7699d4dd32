"""Shared pieces of derivative formulas: undoing broadcasts and reductions."""

from __future__ import annotations

import flambeau as F

from ..tensor_meta import TensorMeta


def needs_grad(t) -> bool:
    """Whether an argument's gradient is wanted: a tensor that requires grad. Formulas
    skip expensive gradients nobody asked for (a network's input, in x @ w.t())."""
    return isinstance(t, (F.Tensor, TensorMeta)) and t.requires_grad


def sum_to(g, shape):
    """Sums g down to `shape` (undoes broadcasting)."""
    if not isinstance(shape, tuple):
        shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.dim() - len(shape)
    if lead > 0:
        g = g.sum(dim=tuple(range(lead)))
    elif lead < 0:  # assignment drops a value's leading 1-dims (t[0] = v of shape (1, n))
        return sum_to(g, shape[-lead:]).reshape(shape)
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape)


def unreduce(g, a, dim_key="dim"):
    """g of a reduction, expanded back to the input's shape."""
    x = a["input"]
    dims = a.get(dim_key)
    nd = x.dim()
    if dims is None or dims == () or dims == []:
        dims = tuple(range(nd))
    elif isinstance(dims, int):
        dims = (dims,)
    if not a.get("keepdim", False):
        for d in sorted(d % max(nd, 1) for d in dims):
            g = g.unsqueeze(d)
    return g.expand(tuple(x.shape)), dims


def reduced_count(x, dims):
    n = 1
    for d in dims:
        n *= x.shape[d] if x.dim() else 1
    return n


def keep(result, a, dim_key="dim"):
    return unreduce(result, a, dim_key)[0]


def first_name(a) -> str:
    """The name of an operator's first parameter (``input``, ``self``, ``tensor``)."""
    return next(iter(a))


def scattered_into(g, x, place):
    """A zero tensor shaped like x with g written where `place(view)` selects."""
    z = F.zeros(tuple(x.shape), dtype=g.dtype)
    if needs_grad(g):
        # create_graph: views are recorded only of tensors that require grad, so z must be
        # one (a non-leaf: in-place writes into a leaf's view are refused) for the copy to
        # reach z's history; else double backward would see no path from g.
        z = z.requires_grad_().clone()
    place(z).copy_(g)
    return z
