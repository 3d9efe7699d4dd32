"""The ``__torch_function__`` protocol helpers PyTorch exposes in torch.autograd.

flambeau's own functions do not dispatch to ``__torch_function__``; these helpers let a
library function written for the protocol do so itself::

    def my_op(x):
        if has_torch_function((x,)):
            return handle_torch_function(my_op, (x,), x)
        ...
"""

from __future__ import annotations

import flambeau as F

# flambeau.autograd re-exports these three, as torch.autograd does; flambeau.nn.functional
# re-exports the has_torch_function family and handle_torch_function.
__all__ = [
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
]


def is_tensor_like(inp) -> bool:
    """True for tensors, tensor classes, and anything whose type has ``__torch_function__``."""
    if isinstance(inp, F.Tensor) or (isinstance(inp, type) and issubclass(inp, F.Tensor)):
        return True
    return hasattr(inp, "__torch_function__")


def _overrides(type_) -> bool:
    return type_ is not F.Tensor and getattr(type_, "__torch_function__", None) is not None


def has_torch_function(relevant_args) -> bool:
    """Whether any argument's type defines ``__torch_function__``."""
    return any(_overrides(type(a)) for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    """has_torch_function for one argument."""
    return _overrides(type(obj))


def has_torch_function_variadic(*args) -> bool:
    """has_torch_function for the arguments themselves."""
    return has_torch_function(args)


def _overloaded(relevant_args) -> list:
    """One argument per overriding type, each subclass before its base classes."""
    out: list = []
    seen: set = set()
    for arg in relevant_args:
        t = type(arg)
        if t in seen or not _overrides(t):
            continue
        seen.add(t)
        at = len(out)
        for i, other in enumerate(out):
            if issubclass(t, type(other)):
                at = i
                break
        out.insert(at, arg)
    return out


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls ``__torch_function__(public_api, types, args, kwargs)`` of the overriding
    arguments in turn (subclasses first) and returns the first result that is not
    NotImplemented; TypeError when every one declines."""
    overloaded = _overloaded(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__module__", "") + "." + getattr(public_api, "__name__", "")
    raise TypeError(
        f"no implementation found for '{name.lstrip('.')}' on types that implement "
        f"__torch_function__: {list(types)}"
    )
