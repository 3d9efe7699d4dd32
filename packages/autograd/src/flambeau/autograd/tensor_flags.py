"""Tensor autograd flags whose rules depend on the graph, which this package owns.

The core's ``requires_grad`` setter, ``requires_grad_`` and ``detach_`` only flip a
flag; installed here, they follow PyTorch: a non-leaf's requires_grad cannot be
changed (detach it instead), and ``detach_()`` makes a non-leaf a leaf with no
``grad_fn``. ``retains_grad`` tells whether ``retain_grad()`` was called on a non-leaf.
"""

from __future__ import annotations

from flambeau import _C, overrides

Tensor = _C.Tensor

# The core's own versions, captured before install() replaces them: the recorder
# attaches nodes through the raw setter, and the autograd handler calls the raw methods.
_CORE_REQUIRES_GRAD = Tensor.__dict__["requires_grad"]
raw_set_requires_grad = _CORE_REQUIRES_GRAD.fset
RAW_METHODS = {"detach_": Tensor.detach_, "requires_grad_": Tensor.requires_grad_}

_ONLY_LEAVES = "you can only change requires_grad flags of leaf variables."
_USE_DETACH = (
    " If you want to use a computed variable in a subgraph that doesn't require "
    "differentiation use var_no_grad = var.detach()."
)


def _set_requires_grad(self, requires_grad) -> None:
    if self.grad_fn is not None:
        raise RuntimeError(_ONLY_LEAVES + ("" if requires_grad else _USE_DETACH))
    raw_set_requires_grad(self, requires_grad)


def requires_grad_(self, requires_grad: bool = True):
    """Sets whether autograd records operations on this leaf; a non-leaf (which always
    requires grad) may only be asked to keep requiring it."""
    if not requires_grad and self.grad_fn is not None:
        raise RuntimeError(_ONLY_LEAVES + _USE_DETACH)
    return RAW_METHODS["requires_grad_"](self, requires_grad)


def detach_(self):
    """Detaches this tensor from the graph in place: it becomes a leaf that does not
    require grad. Views that autograd tracks cannot be detached in place."""
    if self._view is not None:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    RAW_METHODS["detach_"](self)
    self._set_grad_fn(None)
    return self


def _retains_grad(self) -> bool:
    fn = self.grad_fn
    if fn is None:
        return False
    ref = fn._retained.get(self.output_nr)
    return ref is not None and ref() is self


def install() -> None:
    # Through __torch_function__ first, as the core's versions were.
    set_attribute = overrides.set_tensor_attribute
    set_attribute(
        "requires_grad",
        property(_CORE_REQUIRES_GRAD.fget, _set_requires_grad, None, _CORE_REQUIRES_GRAD.__doc__),
    )
    set_attribute("requires_grad_", requires_grad_)
    set_attribute("detach_", detach_)
    set_attribute(
        "retains_grad",
        property(
            _retains_grad, None, None, "Whether retain_grad() made this non-leaf keep its .grad."
        ),
    )
