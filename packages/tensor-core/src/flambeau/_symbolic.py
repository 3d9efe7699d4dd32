"""PyTorch's symbolic-size names, for eager code that mentions them.

flambeau has no symbolic shapes (no tracing compiler makes them): sizes are Python
ints, so the sym_* helpers compute on plain numbers, and SymInt, SymFloat and SymBool
are types no value is an instance of (``isinstance(n, torch.SymInt)`` is False, as it is
for a concrete size in PyTorch). ``cond`` runs the branch its predicate picks, as
torch.cond does outside a compiled region.
"""

from __future__ import annotations

import builtins
import math
import numbers

from flambeau import _C
from flambeau.overrides import _dispatch_on

__all__ = [
    "SymBool", "SymFloat", "SymInt", "cond", "sym_constrain_range",
    "sym_constrain_range_for_size", "sym_float", "sym_fresh_size", "sym_int", "sym_ite",
    "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "symeig",
]  # fmt: skip


class _Symbolic:
    """A symbolic value stands for a number a tracer has not fixed; flambeau never makes
    one (its sizes are ints), so the class cannot be instantiated."""

    def __init__(self, node):
        raise TypeError(
            f"{type(self).__name__} wraps a symbolic node; flambeau has no symbolic shapes "
            "(its sizes are Python numbers)"
        )


class SymInt(_Symbolic):
    """A symbolic int (PyTorch's, made by tracing compilers): flambeau's sizes are ints.

    >>> isinstance(flambeau.ones(3).shape[0], flambeau.SymInt)
    False
    """


class SymFloat(_Symbolic):
    """A symbolic float (PyTorch's, made by tracing compilers).

    >>> isinstance(2.5, flambeau.SymFloat)
    False
    """


class SymBool(_Symbolic):
    """A symbolic bool (PyTorch's, made by tracing compilers).

    >>> isinstance(True, flambeau.SymBool)
    False
    """


def _number(a):
    """a, which must be a plain number (PyTorch's sym_* helpers assert so)."""
    if isinstance(a, _C.Tensor) or not isinstance(a, numbers.Real):
        raise AssertionError(
            f"expected (<class 'numpy.integer'>, <class 'numpy.floating'>, <class 'int'>, "
            f"<class 'float'>), got {type(a)}"
        )
    return a


def _pick(pick, a, b):
    """pick(a, b) of two numbers, a float if either is one."""
    m = pick(_number(a), _number(b))
    return float(m) if isinstance(a, float) or isinstance(b, float) else m


@_dispatch_on("a")
def sym_int(a) -> int:
    """int(a), rounding toward zero (a size expression's int).

    >>> flambeau.sym_int(3.7), flambeau.sym_int(-3.7)
    (3, -3)
    """
    return int(a) if isinstance(a, bool) else math.trunc(_number(a))


@_dispatch_on("a")
def sym_float(a) -> float:
    """float(a).

    >>> flambeau.sym_float(2)
    2.0
    """
    return float(a)


@_dispatch_on("a", "b")
def sym_max(a, b):
    """max(a, b) of two numbers (a float if either is one).

    >>> flambeau.sym_max(2, 3), flambeau.sym_max(4, 1.0)
    (3, 4.0)
    """
    return _pick(builtins.max, a, b)


@_dispatch_on("a", "b")
def sym_min(a, b):
    """min(a, b) of two numbers (a float if either is one).

    >>> flambeau.sym_min(2, 3)
    2
    """
    return _pick(builtins.min, a, b)


@_dispatch_on("a")
def sym_not(a) -> bool:
    """not a.

    >>> flambeau.sym_not(True)
    False
    """
    return not a


@_dispatch_on("b", "t", "f")
def sym_ite(b, t, f):
    """t if b else f; b must be a bool.

    >>> flambeau.sym_ite(False, "t", "f")
    'f'
    """
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    return t if b else f


@_dispatch_on("a")
def sym_sqrt(a) -> float:
    """math.sqrt(a).

    >>> flambeau.sym_sqrt(4)
    2.0
    """
    return math.sqrt(a)


@_dispatch_on("*args")
def sym_sum(args):
    """sum(args), of numbers.

    >>> flambeau.sym_sum([1, 2, 3])
    6
    """
    return builtins.sum(args)


def sym_fresh_size(expr):
    """expr itself: a concrete size needs no fresh symbol.

    >>> flambeau.sym_fresh_size(4)
    4
    """
    return expr


def sym_constrain_range(a, *, min=None, max=None) -> None:
    """Checks that the size a lies in [min, max] (a concrete size has nothing to record).

    >>> flambeau.sym_constrain_range(3, min=0, max=5)
    """
    lo = -math.inf if min is None else min
    hi = math.inf if max is None else max
    if isinstance(a, numbers.Number) and not lo <= a <= hi:
        raise RuntimeError(f"Invalid value range for {a} between [{min}, {max}].")


def sym_constrain_range_for_size(a, *, min=None, max=None) -> None:
    """As sym_constrain_range, for a value used as a size (nothing to record here).

    >>> flambeau.sym_constrain_range_for_size(5, min=0, max=10)
    """


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if pred else ``false_fn(*operands)``: pred is a bool (or a
    number) or a single-element tensor. The control flow a compiler keeps as one
    operator; run eagerly, as here, it is an if.

    >>> x = flambeau.tensor([1.0, -2.0])
    >>> flambeau.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,))
    tensor([-1.,  2.])
    """
    if isinstance(pred, _C.Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred}."
            )
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or a tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    return true_fn(*operands) if pred else false_fn(*operands)


_SYMEIG_REMOVED = (
    "This function was deprecated since version 1.9 and is now removed. The default behavior "
    "has changed from using the upper triangular portion of the matrix by default to using "
    "the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced "
    "with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
    "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed in PyTorch 1.9: raises, saying what replaces it (linalg.eigh/eigvalsh).

    >>> flambeau.symeig(flambeau.eye(2))
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(_SYMEIG_REMOVED)
