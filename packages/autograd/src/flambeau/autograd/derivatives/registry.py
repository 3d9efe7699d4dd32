"""The formula registry: one derivative formula per operator name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import flambeau as F

from ..tensor_meta import TensorMeta
from .helpers import sum_to

Tensor = F.Tensor


@dataclass
class Formula:
    fn: Callable
    needs_input: bool = True  # uses input values (in-place variants keep a copy)
    nondifferentiable: bool = False
    # The outputs whose values the formula reads (checked against in-place changes): True
    # for all, or their positions (batch norm reads its saved statistics, not its output).
    needs_result: bool | tuple[int, ...] = False
    # Which outputs carry a gradient (None: every floating one), as PyTorch's
    # output_differentiability: lstsq's singular values do not.
    differentiable_outputs: tuple[bool, ...] | None = None
    # For each differentiable input, the arguments whose values its gradient reads (None:
    # every gradient reads every argument). A recorded call keeps only the tensors some
    # wanted gradient reads; the others become TensorMeta (shape, dtype, device). An input
    # missing from the mapping reads every argument.
    reads: dict[str, tuple[str, ...]] | None = None
    # Tensor arguments of which only the shape, dtype or device are used (view_as's and
    # type_as's other): never differentiated, so, as in PyTorch, one requiring grad does
    # not make the output require grad (the core's plans skip them: Plan::nondiff).
    nondiff_inputs: tuple[str, ...] = ()

    def reads_output(self, i: int) -> bool:
        n = self.needs_result
        return n if isinstance(n, bool) else i in n

    def kept(self, wanted) -> frozenset | None:
        """The argument names a call keeps when the gradients of `wanted` (names) are
        wanted; None: all of them."""
        reads = self.reads
        if reads is None:
            return None
        out: set = set()
        for name in wanted:
            r = reads.get(name)
            if r is None:
                return None
            out.update(r)
        return frozenset(out)


FORMULAS: dict[str, Formula] = {}


def formula(
    *names,
    needs_input=True,
    needs_result=False,
    differentiable_outputs=None,
    reads=None,
    nondiff_inputs=(),
):
    """Registers fn(g, a) as the derivative formula of the operators `names`.

    reads: {input: (argument, ...)}, for each differentiable input the arguments whose
    values (not only shape, dtype or device) its gradient reads; arguments that no wanted
    gradient reads are not kept by the graph, and reach the formula as TensorMeta. The
    formula must then compute only the wanted gradients (``needs_grad``). Names are
    checked against the operators' parameters.

    nondiff_inputs: the tensor arguments that are not inputs of the derivative (see
    Formula.nondiff_inputs)."""
    if reads is not None:
        _check_reads(names, reads)
        reads = {k: tuple(v) for k, v in reads.items()}

    def register(fn):
        for n in names:
            FORMULAS[n] = Formula(
                fn,
                needs_input,
                False,
                needs_result,
                differentiable_outputs,
                reads,
                tuple(nondiff_inputs),
            )
        return fn

    return register


def _check_reads(names, reads) -> None:
    from .. import schema  # (imports only flambeau)

    params = set()
    for n in names:
        base, _, overload = n.partition(".")
        for sch in schema.overloads(base):
            if not overload or sch.overload == overload:
                params.update(p.name for p in sch.params)
    for k, v in reads.items():
        if isinstance(v, str):
            raise TypeError(f"reads[{k!r}] of {names[0]!r} must be a tuple of names, not a str")
        for name in (k, *v):
            if name not in params:
                raise ValueError(
                    f"reads of the formula of {', '.join(names)!s} names {name!r}, which is not "
                    f"a parameter of the operator (parameters: {', '.join(sorted(params))})"
                )


# Composite operators (PyTorch's CompositeImplicitAutograd): instead of a
# formula, autograd runs fn(call, bound_args), a decomposition into operators
# that `call(name, *args, **kwargs)` records one by one.
COMPOSITES: dict[str, Callable] = {}


def composite(*names):
    def register(fn):
        for n in names:
            COMPOSITES[n] = fn
        return fn

    return register


def nondifferentiable(*names):
    for n in names:
        FORMULAS[n] = Formula(lambda g, a: {}, False, True)


def bind_formula(key, f: Formula | None, inputs, tuple_output=False):
    """The backward function of one recorded call: grads of outputs -> grads of inputs.
    Formulas of operators returning a tuple get a tuple of gradients."""

    def backward(grads, args, edges=None):
        """edges: the node's next_functions, one per entry of `inputs` (which gradients
        are wanted: needed when the call kept only what they read)."""
        if f is None:
            raise RuntimeError(f"the derivative for '{key}' is not implemented")
        if edges is not None and f.reads is not None:
            _mark_wanted(args, inputs, edges)
        by_name = f.fn(grads if tuple_output else grads[0], args)
        out = []
        for name, j in inputs:
            gi, x = by_name.get(name), args[name]
            if gi is not None and j is not None:
                gi, x = gi[j], x[j]
            out.append(fit_gradient(gi, x) if isinstance(gi, Tensor) else None)
        return tuple(out)

    return backward


def fit_gradient(gi, x):
    """The gradient gi of input x with x's dtype and shape. (The core's engine calls it
    for native formulas' gradients too.)

    >>> fit_gradient(flambeau.ones(2, 3, dtype=flambeau.float64), flambeau.zeros(3))
    tensor([2., 2., 2.])
    """
    if gi.dtype != x.dtype:
        # A gradient has its input's dtype, as PyTorch's engine makes it (sum with
        # dtype=, mixed-precision arithmetic); a real input of a complex computation
        # gets the real part (dL/dx).
        gi = (gi.real if gi.is_complex() and not x.is_complex() else gi).to(x.dtype)
    # Shapes are read at backward: in-place copies keep the input's shape.
    return sum_to(gi, x.shape)


def _mark_wanted(args: dict, inputs, edges) -> None:
    """Makes ``needs_grad`` of each argument say whether the node wants its gradient,
    where the call kept only what the wanted gradients read: a TensorMeta learns it
    from the node's edge, and a kept tensor that has come to require grad since the call
    (no edge) is seen detached, so that no formula computes its gradient from a value
    that was not kept."""
    metas = False
    for (name, j), (fn, _) in zip(inputs, edges):
        v = args.get(name)
        if j is None and type(v) is TensorMeta:
            v.requires_grad = fn is not None
            metas = True
    if not metas:
        return
    for (name, j), (fn, _) in zip(inputs, edges):
        v = args.get(name)
        if j is None and fn is None and isinstance(v, Tensor) and v.requires_grad:
            args[name] = v.detach()
