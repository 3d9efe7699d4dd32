"""flambeau.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp."""

from __future__ import annotations

import flambeau as F

from .engine import run_backward
from .grad_mode import enable_grad
from .graph import zeros_for_none


def _tuple(x):
    return (tuple(x), True) if isinstance(x, (list, tuple)) else ((x,), False)


def _prepare(inputs, create_graph):
    return tuple(
        x.detach().requires_grad_(True) if not create_graph or not x.requires_grad else x
        for x in inputs
    )


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J).

    >>> from flambeau.autograd.functional import vjp
    >>> vjp(lambda x: x**2, flambeau.tensor([1.0, 2.0]), flambeau.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    inputs, is_tuple = _tuple(inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out = func(*xs)
        outs, out_tuple = _tuple(out)
        vs = _tuple(v)[0] if v is not None else (None,) * len(outs)
        grads = run_backward(
            outs,
            list(vs),
            retain_graph=create_graph,
            create_graph=create_graph,
            inputs=list(xs),
            capture=True,
            allow_unused=True,
        )
    grads = zeros_for_none(grads, xs)
    result = (
        out
        if create_graph
        else (tuple(o.detach() for o in outs) if out_tuple else outs[0].detach())
    )
    return result, grads if is_tuple else grads[0]


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by the double-vjp trick.

    >>> from flambeau.autograd.functional import jvp
    >>> jvp(lambda x: x**2, flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.0, 0.0]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    inputs, is_tuple = _tuple(inputs)
    vs = (
        _tuple(v)[0]
        if v is not None
        else tuple(F.ones(tuple(x.shape), dtype=x.dtype) for x in inputs)
    )
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        outs, out_tuple = _tuple(func(*xs))
        us = [F.zeros(tuple(o.shape), dtype=o.dtype).requires_grad_(True) for o in outs]
        gs = run_backward(
            outs,
            us,
            retain_graph=True,
            create_graph=True,
            inputs=list(xs),
            capture=True,
            allow_unused=True,
        )
        pairs = [(g, v_) for g, v_ in zip(gs, vs) if g is not None]
        jv = run_backward(
            [g for g, _ in pairs],
            [v_ for _, v_ in pairs],
            retain_graph=create_graph,
            create_graph=create_graph,
            inputs=us,
            capture=True,
            allow_unused=True,
        )
    jv = zeros_for_none(jv, outs)
    det = tuple(o.detach() for o in outs)
    return (det if out_tuple else det[0]), (jv if out_tuple else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False):
    """The Jacobian of func at inputs, one row of vjps per output element.

    >>> from flambeau.autograd.functional import jacobian
    >>> jacobian(lambda x: x**2, flambeau.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    inputs, in_tuple = _tuple(inputs)
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        outs, out_tuple = _tuple(func(*xs))
        result = []
        for o in outs:
            per_input = [[] for _ in xs]
            for j in range(o.numel()):
                e = F.zeros(tuple(o.shape), dtype=o.dtype)
                e.reshape(-1)[j] = 1.0
                gs = run_backward(
                    [o],
                    [e],
                    retain_graph=True,
                    create_graph=create_graph,
                    inputs=list(xs),
                    capture=True,
                    allow_unused=True,
                )
                for k, (g, x) in enumerate(zip(gs, xs)):
                    per_input[k].append(
                        g if g is not None else F.zeros(tuple(x.shape), dtype=x.dtype)
                    )
            blocks = []
            for rows, x in zip(per_input, xs):
                shape = tuple(o.shape) + tuple(x.shape)
                blocks.append(
                    F.stack(rows).reshape(shape) if rows else F.zeros(shape, dtype=x.dtype)
                )
            result.append(tuple(blocks) if in_tuple else blocks[0])
    return tuple(result) if out_tuple else result[0]


def _differentiable_grads(out, xs):
    """Gradients of a scalar `out` with respect to xs, themselves differentiable."""
    return run_backward(
        [out],
        [None],
        retain_graph=True,
        create_graph=True,
        inputs=list(xs),
        capture=True,
        allow_unused=True,
    )


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False):
    """The Hessian of a scalar function.

    >>> from flambeau.autograd.functional import hessian
    >>> hessian(lambda x: (x**3).sum(), flambeau.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs, in_tuple = _tuple(inputs)

    def grad_fn(*xs):
        with enable_grad():
            return zeros_for_none(_differentiable_grads(func(*xs), xs), xs)

    jac = jacobian(grad_fn, inputs, create_graph=create_graph)
    if in_tuple:
        return jac
    return jac[0][0] if isinstance(jac[0], tuple) else jac[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H).

    >>> from flambeau.autograd.functional import vhp
    >>> vhp(lambda x: (x**3).sum(), flambeau.tensor([1.0, 2.0]), flambeau.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    inputs, is_tuple = _tuple(inputs)
    with enable_grad():
        xs = _prepare(inputs, True)
        out = func(*xs)
        gs = _differentiable_grads(out, xs)
        vs = _tuple(v)[0]
        hv = run_backward(
            list(gs),
            list(vs),
            retain_graph=create_graph,
            create_graph=create_graph,
            inputs=list(xs),
            capture=True,
            allow_unused=True,
        )
    hv = zeros_for_none(hv, xs)
    return out.detach(), hv if is_tuple else hv[0]


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v); equal to vhp for the symmetric Hessians of smooth functions.

    >>> from flambeau.autograd.functional import hvp
    >>> hvp(lambda x: (x**3).sum(), flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.0, 0.0]))
    (tensor(9.), tensor([6., 0.]))
    """
    return vhp(func, inputs, v, create_graph, strict)
