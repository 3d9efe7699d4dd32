"""Gradient-related Tensor attributes that exist with or without flambeau-autograd.

The core records nothing; the flambeau-autograd package fills the dispatcher's
autograd slot and replaces these defaults when it is imported (the core imports
it lazily, the first time a tensor is marked as requiring grad). Without it,
tensors still carry ``requires_grad`` and asking for a gradient raises an error
naming the package.
"""

from __future__ import annotations

from flambeau import _C, _siblings, overrides
from flambeau._arg_checks import dtype_name

# The core's .grad, which stores without checking (captured before install wraps it).
_RAW_GRAD = _C.Tensor.__dict__["grad"]

MISSING = "computing gradients needs flambeau.autograd: " + _siblings.missing_message(
    "flambeau.autograd"
)


def _autograd():
    try:
        import flambeau.autograd as autograd
    except ImportError as e:
        raise RuntimeError(MISSING) from e
    return autograd


# As in PyTorch, a subclass's __torch_function__ sees backward and register_hook
# themselves; Tensor's default runs them with the protocol off, so the backward pass does
# not go through the subclass.
@overrides._dispatch_on("self", method="backward")
def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of self with respect to graph leaves (see flambeau.autograd)."""
    _autograd().backward(self, gradient, retain_graph, create_graph, inputs=inputs)


@overrides._dispatch_on("self", method="register_hook")
def _register_hook(self, hook):
    return _autograd().register_tensor_hook(self, hook)


def _retain_grad(self):
    _autograd().retain_grad(self)


def _register_post_accumulate_grad_hook(self, hook):
    """hook(tensor) runs after backward has accumulated this leaf's .grad; returns a
    handle whose remove() unregisters it."""
    return _autograd().register_post_accumulate_grad_hook(self, hook)


def _get_grad_dtype(self):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self._grad_dtype


def _set_grad_dtype(self, dtype) -> None:
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise RuntimeError(
            f"grad_dtype must be a flambeau.dtype or None, but got {type(dtype).__name__}"
        )
    grad = self.grad
    if grad is not None and dtype is not None and grad.dtype != dtype:
        raise RuntimeError(
            f"Cannot set grad_dtype to '{dtype_name(dtype)}' because there is already a "
            f"gradient with dtype '{dtype_name(grad.dtype)}'. Please clear the gradient "
            "(.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches "
            "the existing gradient's dtype."
        )
    self._grad_dtype = dtype


def _set_grad(self, value) -> None:
    # PyTorch's checks: a tensor (or None) on the same device, of the same size, and of the
    # leaf's grad_dtype (its own dtype unless set; None allows any).
    if value is not None:
        if not isinstance(value, _C.Tensor):
            raise TypeError(
                "assigned grad expected to be a Tensor or None but got grad of type "
                f"{type(value).__name__}"
            )
        if value.device != self.device:
            raise RuntimeError(
                f"attempting to assign a gradient located on device '{value.device}' to a "
                f"tensor located on device '{self.device}'. Please ensure that the gradient "
                "and the tensor are on the same device"
            )
        if value.shape != self.shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                "the same size"
            )
        allowed = self._grad_dtype
        if allowed is not None and value.dtype != allowed:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{dtype_name(value.dtype)}' to a "
                f"tensor with grad_dtype '{dtype_name(allowed)}'. The gradient must match the "
                "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                "grad_dtype attribute with a specific dtype, or None to allow any dtype."
            )
    _RAW_GRAD.fset(self, value)


_GRAD_DOC = """The gradient accumulated into this tensor by backward (None until then). Assigning
checks what PyTorch checks: a tensor or None, same device, same size, the grad_dtype."""

_GRAD_DTYPE_DOC = """The dtype allowed for this leaf's .grad (by default the tensor's own). Once set
to a dtype, backward casts the gradients it accumulates into .grad to it; None allows any."""


def _set_data(self, value):
    """``t.data = value``: t (the same object, with its .grad and flags) views value's
    storage with value's shape, strides and dtype; autograd does not record it."""
    self._set_data(value)
    # Autograd's record of where t sat in its base's storage no longer applies.
    self._view = None


def install() -> None:
    T = _C.Tensor
    # grad_fn, is_leaf, output_nr and .grad's storage are the core's (its autograd
    # slot, csrc/python/autograd_meta.h); assigning .grad goes through PyTorch's checks.
    T.grad = property(_RAW_GRAD.fget, _set_grad, None, _GRAD_DOC)
    T.backward = _backward
    T.register_hook = _register_hook
    T.retain_grad = _retain_grad
    T.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
    T.grad_dtype = property(_get_grad_dtype, _set_grad_dtype, None, _GRAD_DTYPE_DOC)
    T.retains_grad = False  # no tensor retains a gradient before autograd records one
    # The same memory, outside any graph (PyTorch's .data); write into it with copy_.
    # Assigning re-points this very tensor at another's storage, shape and dtype.
    T.data = property(lambda self: self.detach(), _set_data)
