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
    if is_grads_batched:
        return _grads_batched(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
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


def _grads_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                   materialize_grads):  # fmt: skip
    """grad(..., is_grads_batched=True): the first dim of each grad_output is a batch of
    vectors, and each gradient gains that dim. One backward pass per vector (as flambeau's
    vmap runs element by element), over the graph kept for all but the last."""
    outs = [outputs] if isinstance(outputs, _F.Tensor) else list(outputs)
    if grad_outputs is None or isinstance(grad_outputs, _F.Tensor):
        batches = [grad_outputs] * len(outs) if grad_outputs is None else [grad_outputs]
    else:
        batches = list(grad_outputs)
    if len(batches) != len(outs):
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs: got {len(batches)} "
            f"grad_outputs for {len(outs)} outputs"
        )
    sizes = set()
    for i, (out, g) in enumerate(zip(outs, batches)):
        if g is None:
            continue
        if g.dim() == 0 or tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions "
                "are expected to match the shape of corresponding output, but a mismatch "
                f"was detected: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}. If you only want some "
                "tensors in `grad_output` to be considered batched, consider using vmap."
            )
        sizes.add(g.shape[0])
    if len(sizes) > 1:
        raise RuntimeError(
            "is_grads_batched=True: the grad_outputs' batch dimensions differ in size "
            f"({sorted(sizes)})"
        )
    n = sizes.pop() if sizes else 1
    keep = create_graph if retain_graph is None else retain_graph
    per_vector = [
        grad(
            outs,
            inputs,
            [None if g is None else g[b] for g in batches],
            retain_graph=keep if b == n - 1 else True,
            create_graph=create_graph,
            allow_unused=allow_unused,
            materialize_grads=materialize_grads,
        )
        for b in range(n)
    ]
    if n == 0:  # an empty batch: gradients of batch size 0
        return tuple(_F.zeros((0, *x.shape), dtype=x.dtype, device=x.device) for x in inputs)
    return tuple(None if column[0] is None else _F.stack(column) for column in zip(*per_vector))


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
