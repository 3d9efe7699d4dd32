"""flambeau.func: composable function transforms, as PyTorch's ``torch.func``.

``vmap`` maps a function over a batch dimension; ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd`` and ``hessian`` take
derivatives of functions of tensors; ``functional_call`` and ``stack_module_state``
run modules as functions of their parameters; ``rearrange`` reorders axes by an
einops pattern. The transforms nest and compose
(``vmap(grad(f))``, ``jacfwd(jacrev(f))``) and have PyTorch's arguments, result
structures and errors.

They are built on flambeau's reverse-mode autograd and run eagerly: vmap calls the
function once per batch element and stacks the results, and the forward-mode
transforms (jvp, linearize, jacfwd) compute their products by reverse mode (the
double-vjp identity). Each function's docstring says where that shows.
"""

from __future__ import annotations

from ._autodiff import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._misc import debug_unwrap, functionalize
from ._modules import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._rearrange import rearrange
from ._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vmap",
    "replace_all_batch_norm_modules_",
    "functionalize",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "vjp",
    "functional_call",
    "stack_module_state",
    "debug_unwrap",
]
