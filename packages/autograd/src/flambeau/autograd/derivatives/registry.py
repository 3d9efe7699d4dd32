"""The formula registry: one derivative formula per operator name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import flambeau as F

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

    def reads_output(self, i: int) -> bool:
        n = self.needs_result
        return n if isinstance(n, bool) else i in n


FORMULAS: dict[str, Formula] = {}


def formula(*names, needs_input=True, needs_result=False, differentiable_outputs=None):
    def register(fn):
        for n in names:
            FORMULAS[n] = Formula(fn, needs_input, False, needs_result, differentiable_outputs)
        return fn

    return register


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

    def backward(grads, args):
        if f is None:
            raise RuntimeError(f"the derivative for '{key}' is not implemented")
        by_name = f.fn(grads if tuple_output else grads[0], args)
        out = []
        for name, j in inputs:
            gi, x = by_name.get(name), args[name]
            if gi is not None and j is not None:
                gi, x = gi[j], x[j]
            if not isinstance(gi, Tensor):
                out.append(None)
                continue
            if gi.dtype != x.dtype:
                # A gradient has its input's dtype, as PyTorch's engine makes it (sum with
                # dtype=, mixed-precision arithmetic); a real input of a complex computation
                # gets the real part (dL/dx).
                gi = (gi.real if gi.is_complex() and not x.is_complex() else gi).to(x.dtype)
            # Shapes are read at backward: in-place copies keep the input's shape.
            out.append(sum_to(gi, x.shape))
        return tuple(out)

    return backward
