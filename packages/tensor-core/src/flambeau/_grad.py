"""Gradient-related Tensor attributes that exist with or without flambeau-autograd.

The core records nothing; the flambeau-autograd package fills the dispatcher's
autograd slot and replaces these defaults when it is imported (the core imports
it lazily, the first time a tensor is marked as requiring grad). Without it,
tensors still carry ``requires_grad`` and asking for a gradient raises an error
naming the package.
"""

from __future__ import annotations

from flambeau import _C, _siblings

MISSING = "computing gradients needs flambeau.autograd: " + _siblings.missing_message(
    "flambeau.autograd"
)


def _autograd():
    try:
        import flambeau.autograd as autograd
    except ImportError as e:
        raise RuntimeError(MISSING) from e
    return autograd


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of self with respect to graph leaves (see flambeau.autograd)."""
    _autograd().backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    return _autograd().register_tensor_hook(self, hook)


def _retain_grad(self):
    _autograd().retain_grad(self)


def _set_data(self, value):
    """``t.data = value``: t (the same object, with its .grad and flags) views value's
    storage with value's shape, strides and dtype; autograd does not record it."""
    self._set_data(value)
    # Autograd's record of where t sat in its base's storage no longer applies.
    self.__dict__.pop("_view", None)


def install() -> None:
    T = _C.Tensor
    # Plain class attributes give every tensor its defaults; autograd sets
    # per-tensor values in the instance dict.
    T.grad = None
    T.grad_fn = None
    T.backward = _backward
    T.register_hook = _register_hook
    T.retain_grad = _retain_grad
    T.is_leaf = property(lambda self: self.grad_fn is None)
    # The same memory, outside any graph (PyTorch's .data); write into it with copy_.
    # Assigning re-points this very tensor at another's storage, shape and dtype.
    T.data = property(lambda self: self.detach(), _set_data)
