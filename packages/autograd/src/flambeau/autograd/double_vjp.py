"""Jacobian-vector products on reverse-mode autograd: the double-vjp identity.

flambeau records graphs for reverse mode only. A forward-mode product J v is still one
backward pass away: with a dummy cotangent u that requires grad, g(u) = J^T u is a vjp
built with create_graph=True, so linear and differentiable in u, and the vjp of g with
cotangent v is J v. flambeau.func (jvp, linearize) and flambeau.autograd.forward_ad both
build on this module; it also holds the graph tests they share, which decide whether a
result stays attached to a graph the caller built or is detached.
"""

from __future__ import annotations

import flambeau as F

from .grad_mode import enable_grad
from .graph import AccumulateGrad


def _grad(outputs, inputs, grad_outputs, *, create_graph):
    from . import grad  # the package's grad: a late import, this module loads first

    return grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )


class Linearized:
    """The double-vjp construction for J v: dummy cotangents ``us`` and ``gs = J^T us``.

    ``outputs`` and ``inputs`` are tensors of one graph. ``gs[j]`` is None when input j
    is not reached from any output (it has no effect on them); ``reached(j)`` says so.

    >>> from flambeau.autograd.double_vjp import Linearized
    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> lin = Linearized([x * x], [x])
    >>> lin.apply([flambeau.tensor([1.0, 1.0])], create_graph=False)
    [tensor([2., 4.])]
    """

    def __init__(self, outputs, inputs, cotangent=F.zeros_like):
        # cotangent(output): the dummy u's value; g = J^T u does not depend on it, but a
        # nonzero one lets a caller check the products against g (jacfwd's columns).
        self.outputs = outputs
        self.live = [i for i, o in enumerate(outputs) if o.requires_grad]
        self.us = [cotangent(outputs[i]).requires_grad_(True) for i in self.live]
        self.gs = [None] * len(inputs)
        if self.live:
            with enable_grad():
                gs = _grad([outputs[i] for i in self.live], inputs, self.us, create_graph=True)
            self.gs = list(gs)
        self.local_ids = {id(u) for u in self.us}
        release(self.us)  # differentiated only by apply, which passes them as local

    def reached(self, j: int) -> bool:
        return self.gs[j] is not None

    def apply(self, tangents, *, create_graph: bool):
        """J v for tangents v (one per input; None for none); None for an output whose
        product is structurally zero (it depends on no input with a tangent, or only
        through operations whose derivative is a constant zero)."""
        pairs = [
            (g, v.to(g.dtype) if v.dtype != g.dtype else v)
            for g, v in zip(self.gs, tangents)
            if v is not None and g is not None and g.requires_grad
        ]
        out = [None] * len(self.outputs)
        if not pairs:
            return out
        with enable_grad():
            jvs = _grad(
                [g for g, _ in pairs],
                self.us,
                [v for _, v in pairs],
                create_graph=create_graph,
            )
        for i, jv in zip(self.live, jvs):
            out[i] = jv
        return out


_RELEASED = "_flambeau_transform_released"


def release(leaves) -> None:
    """Marks leaves a transform made for itself as done with: once the transform has
    returned, no one can differentiate with respect to them, so reaches_outside treats
    them as local everywhere (an enclosing transform's result that kept a graph through
    an inner transform's leaf still depends only on its own inputs)."""
    for t in leaves:
        setattr(t, _RELEASED, True)


def _outside(leaf, local) -> bool:
    return id(leaf) not in local and not getattr(leaf, _RELEASED, False)


def reaches_outside(tensors, local) -> bool:
    """Whether any tensor's graph reaches a leaf whose id is not in `local` (a leaf the
    caller built the graph from, rather than one a transform made for itself; leaves of
    transforms that have returned, see release, count as local).

    >>> from flambeau.autograd.double_vjp import reaches_outside
    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> reaches_outside([x * 2], local={id(x)}), reaches_outside([x * 2], local=set())
    (False, True)
    """
    stack, seen = [], set()
    for t in tensors:
        if isinstance(t, F.Tensor) and t.requires_grad:
            if t.grad_fn is None:
                if _outside(t, local):
                    return True
            else:
                stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if _outside(node.variable, local):
                return True
            continue
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is not None:
                stack.append(nxt)
    return False


def lower(t, local, outer: bool):
    """`t` detached, unless it depends on a leaf outside `local` and `outer` (grad mode
    was on where the caller asked) says to keep that graph.

    >>> from flambeau.autograd.double_vjp import lower
    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> lower(x * 2, {id(x)}, outer=True).requires_grad
    False
    """
    if isinstance(t, F.Tensor) and t.requires_grad:
        if not (outer and reaches_outside([t], local)):
            return t.detach()
    return t
