"""The ``__torch_function__`` protocol helpers PyTorch exposes in torch.autograd.

They live in the core (``flambeau.overrides``, PyTorch's ``torch.overrides``), whose
bindings dispatch to the ``__torch_function__`` of Tensor subclasses; flambeau.autograd
re-exports three of them, as torch.autograd does, and flambeau.nn.functional the
has_torch_function family and handle_torch_function.
"""

from __future__ import annotations

from flambeau.overrides import (
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
)

__all__ = [
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
]
