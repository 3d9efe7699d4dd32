"""flambeau.autograd: tape-based reverse-mode automatic differentiation.

Importing this package installs its recorder in the core's autograd slot (the
core does so by itself the first time a tensor is marked as requiring grad).
"""

from __future__ import annotations

import weakref

import flambeau as _F
from flambeau.profiler._types import DeviceType, ProfilerActivity, ProfilerState, kineto_available

from . import forward_ad, functional, graph, profiler, profiler_util  # noqa: F401
from . import tensor_flags as _tensor_flags
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import install as _install_engine
from .engine import run_backward as _run_backward
from .engine_settings import (
    enforce_grad_layout_policy,
    is_multithreading_enabled,
    is_view_replay_enabled,
    set_multithreading_enabled,
)
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import AccumulateGrad, GradientEdge, Node, RemovableHandle
from .nested_io import NestedIOFunction
from .overrides import handle_torch_function, has_torch_function, is_tensor_like
from .recorder import accumulate_node as _accumulate_node
from .recorder import install as _install
from .variable import Variable

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "detect_anomaly",
    "set_detect_anomaly",
    "functional",
    "forward_ad",
    "Node",
    "AccumulateGrad",
    "RemovableHandle",
    "Variable",
    "NestedIOFunction",
    "set_multithreading_enabled",
    "enforce_grad_layout_policy",
    "graph",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
    "is_tensor_like",
    "has_torch_function",
    "handle_torch_function",
    "kineto_available",
    "DeviceType",
    "ProfilerActivity",
    "ProfilerState",
]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates into .grad of graph leaves the gradients of `tensors`.

    >>> x = flambeau.tensor([2.0, 3.0], requires_grad=True)
    >>> flambeau.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([4., 6.])
    """
    if isinstance(inputs, _F.Tensor):
        inputs = [inputs]
    _run_backward(
        tensors,
        grad_tensors,
        retain_graph,
        create_graph,
        inputs=list(inputs) if inputs is not None else None,
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of `outputs` with respect to `inputs` (a tuple), without touching .grad.

    >>> x = flambeau.tensor([2.0, 3.0], requires_grad=True)
    >>> flambeau.autograd.grad((x**2).sum(), x)
    (tensor([4., 6.]),)
    >>> print(x.grad)
    None
    """
    single = isinstance(inputs, (_F.Tensor, GradientEdge))
    inputs = [inputs] if single else list(inputs)
    grads = _run_backward(
        outputs,
        grad_outputs,
        retain_graph,
        create_graph,
        inputs=inputs,
        capture=True,
        allow_unused=bool(allow_unused or materialize_grads),
    )
    if materialize_grads:
        if any(g is None and isinstance(x, GradientEdge) for g, x in zip(grads, inputs)):
            raise RuntimeError(
                "materialize_grads: no gradient reached a GradientEdge input, and an edge "
                "carries no shape to make zeros of"
            )
        grads = tuple(
            g if g is not None else _F.zeros(tuple(x.shape), dtype=x.dtype)
            for g, x in zip(grads, inputs)
        )
    return grads


def register_tensor_hook(t, hook):
    """Tensor.register_hook: hook(grad) may return a replacement gradient."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is None:
        node = _accumulate_node(t)
        return node._register_tensor_hook(0, hook)
    return t.grad_fn._register_tensor_hook(t.output_nr, hook)


def register_post_accumulate_grad_hook(t, hook):
    """hook(tensor) runs after a leaf's .grad has been accumulated."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return _accumulate_node(t).register_post_accumulate_grad_hook(hook)


def retain_grad(t):
    """Makes a non-leaf tensor keep its .grad after backward."""
    if not t.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None:
        return
    t.grad_fn._own("_retained")[t.output_nr] = weakref.ref(t)


_F.overrides.set_tensor_attribute(
    "register_post_accumulate_grad_hook", register_post_accumulate_grad_hook
)
_tensor_flags.install()
_install()
_install_engine()
