"""Tensor properties of complex numbers and matrix transposes: ``real``, ``imag``
(settable: assignment copies into the view), ``T``, ``H``, ``mT``, ``mH``.

They call the table's operators (``flambeau.real``, ``transpose``, ``adjoint``)
so autograd records them like any other call.
"""

from __future__ import annotations

import warnings

from flambeau import _C


def _real_set(self, value):
    _C.real(self).copy_(value)


def _imag_set(self, value):
    _C.imag(self).copy_(value)


def _matrices_only(t, name):
    if t.dim() == 0:
        warnings.warn(
            f"Tensor.{name} is deprecated on 0-D tensors. This function is the identity in "
            "these cases.",
            UserWarning,
            stacklevel=3,
        )
        return False
    if t.dim() < 2:
        raise RuntimeError(
            f"tensor.{name} is only supported on matrices or batches of matrices. "
            f"Got {t.dim()}-D tensor."
        )
    return True


def _mT(self):
    return self.transpose(-2, -1) if _matrices_only(self, "mT") else self


def _mH(self):
    return _C.adjoint(self) if _matrices_only(self, "mH") else self.conj()


def _T(self):
    if self.dim() != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated. Consider `x.mT` to transpose batches of matrices or `x.permute(...)` "
            "to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return self.permute(tuple(range(self.dim() - 1, -1, -1)))


def _H(self):
    if self.dim() == 0:
        return self.conj()
    if self.dim() != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
        )
    return _C.adjoint(self)


def install() -> None:
    Tensor = _C.Tensor
    Tensor.real = property(_C.real, _real_set, doc="The real parts (a view; settable).")
    Tensor.imag = property(_C.imag, _imag_set, doc="The imaginary parts (a view; settable).")
    Tensor.mT = property(_mT, doc="The last two dims transposed (a view).")
    Tensor.mH = property(_mH, doc="The conjugate transpose of the last two dims.")
    Tensor.T = property(_T, doc="The dims reversed (a view).")
    Tensor.H = property(_H, doc="The conjugate transpose of a matrix.")
