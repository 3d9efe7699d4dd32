"""Variable: PyTorch's pre-0.4 wrapper, kept as PyTorch keeps it, for old programs.

``Variable(t)`` returns a plain tensor: ``t``'s data outside any graph (like
``t.detach()``), requiring grad when asked; ``isinstance(x, Variable)`` holds for
every tensor.
"""

from __future__ import annotations

import warnings

import flambeau as F

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, F.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a tensor (empty for
    None) sharing ``data``'s memory, with no history. ``volatile`` has no effect (use
    ``flambeau.no_grad``); it warns when True.

    >>> v = flambeau.autograd.Variable(flambeau.ones(2), requires_grad=True)
    >>> v
    tensor([1., 1.], requires_grad=True)
    >>> isinstance(flambeau.ones(2), flambeau.autograd.Variable)
    True
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if data is None:
            data = F.empty(0)
        elif not isinstance(data, F.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with flambeau.no_grad():` "
                "instead.",
                UserWarning,
                stacklevel=2,
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"argument 5 must be str or None, not {type(name).__name__}")
        result = data.detach()
        if requires_grad:
            result.requires_grad_(True)
        return result
