"""Tensor.polygamma(n) and Tensor.polygamma_(n).

The operator is polygamma(int n, Tensor input): the tensor is its second
parameter, and generated methods bind self to the first, so the methods are
written here over the function.
"""

from __future__ import annotations

from flambeau import _C


def _polygamma(self, n: int):
    """polygamma(n, self): the n-th derivative of digamma."""
    return _C.polygamma(n, self)


def _polygamma_(self, n: int):
    """In-place polygamma(n, self)."""
    if self.requires_grad and _C.is_grad_enabled():
        # Recorded as polygamma of a copy (which the formula saves, and copy_
        # does not modify), then an in-place copy_ into self.
        return self.copy_(_C.polygamma(n, self.clone()))
    _C.polygamma(n, self, out=self)  # dtype checks as any in-place op
    return self


def install() -> None:
    _C.Tensor.polygamma = _polygamma
    _C.Tensor.polygamma_ = _polygamma_
