"""The backward engine: walks the recorded graph in reverse topological order.

No recursion: dependencies are counted with an explicit stack, then nodes run
from a ready queue once every consumer has delivered its gradient, so a chain
of any length is fine.
"""

from __future__ import annotations

import threading

import flambeau as F
from flambeau import _C

from . import anomaly_mode, engine_settings
from .derivatives.registry import fit_gradient
from .grad_mode import set_grad_enabled
from .graph import AccumulateGrad, FormulaNode, GradientEdge

_tasks = threading.local()  # the backward passes running on this thread, innermost last


class GraphTask:
    """One backward pass: the nodes it can reach (and so may run), and callbacks to run
    when it ends."""

    __slots__ = ("_roots", "_targets", "_nodes", "callbacks", "executes_all", "__weakref__")

    def __init__(self, roots, target_nodes=None, executes_all=True):
        self._roots = roots
        self._targets = target_nodes  # with inputs=: their nodes
        self._nodes = None
        self.callbacks: list = []
        # backward() without inputs=: every reachable node runs (the reentrant variant
        # of activation checkpointing relies on it).
        self.executes_all = executes_all

    @property
    def nodes(self) -> set:
        """The nodes this pass may run (found when first asked: multi-grad hooks do)."""
        if self._nodes is None:
            self._nodes = _C._autograd_graph_nodes(list(self._roots), self._targets)
        return self._nodes


def current_task() -> GraphTask | None:
    """The backward pass running on this thread, or None outside backward."""
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _root_grads(outputs, grad_outputs):
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if i < len(grad_outputs) else None
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = F.ones(tuple(out.shape), dtype=out.dtype, device=out.device)
        elif not isinstance(g, F.Tensor):
            g = F.full(tuple(out.shape), g, dtype=out.dtype, device=out.device)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                f"output[{i}] has a shape of {tuple(out.shape)}."
            )
        elif g.dtype != out.dtype:
            if g.is_complex() != out.is_complex():
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g.dtype} and output[{i}] has a dtype of {out.dtype}."
                )
            g = g.to(out.dtype)  # a gradient has its tensor's dtype
        grads.append(g)
    return grads


def _edge_of(t):
    from .recorder import accumulate_node

    if t.grad_fn is not None:
        return t.grad_fn, t.output_nr
    return accumulate_node(t), 0


def _dense(t) -> bool:
    """Whether t's elements tile its memory exactly once (some order of its dims)."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _new_grad(g, leaf, owned=False):
    """A leaf's first gradient, laid out as the gradient layout policy says: g itself
    when the engine holds the only reference to it and its storage (owned) and it is
    laid out so already, as PyTorch's AccumulateGrad takes it; else a copy. A sparse
    gradient (nn.Embedding(sparse=True), ...) stays sparse, as in PyTorch."""
    if g.is_sparse:
        return g if owned else g.clone()
    like = leaf if engine_settings.is_grad_layout_policy_enforced() else g
    dense = _dense(like)
    if owned and g.device == leaf.device:
        laid_out = g.stride() == like.stride() if dense else g.is_contiguous()
        if laid_out or g.numel() <= 1:
            return g
    if dense:
        out = F.empty_strided(tuple(like.shape), like.stride(), dtype=g.dtype, device=g.device)
    else:
        out = F.empty(tuple(g.shape), dtype=g.dtype, device=g.device)
    return out.copy_(g)


def _accumulate(node: AccumulateGrad, g, create_graph, owned=False):
    """Adds g into the leaf's .grad. owned: nothing but the engine refers to g or its
    memory, so a first gradient may become .grad without a copy."""
    leaf = node.variable
    if not create_graph:
        g = g.detach()
    grad_dtype = leaf._grad_dtype  # Tensor.grad_dtype: the leaf's own unless set
    if grad_dtype is not None and g.dtype != grad_dtype:
        g = g.to(grad_dtype)
    if leaf.grad is None:
        # A fresh tensor unless owned: g may be a broadcast view or the caller's own tensor.
        # With create_graph always a (differentiable) copy, as PyTorch's AccumulateGrad
        # makes: .grad is then no view of another tensor (detach_() on it works).
        leaf.grad = _new_grad(g, leaf, owned and not create_graph)
    elif create_graph:
        leaf.grad = leaf.grad + g
    elif leaf.grad.is_sparse and not g.is_sparse:
        # As PyTorch's AccumulateGrad: a dense gradient onto a sparse one gives a dense
        # .grad (sparse + sparse and dense + sparse accumulate in place).
        leaf.grad = g + leaf.grad
    else:
        leaf.grad.add_(g)
    for hook in list(node._post_hooks.values()):
        result = hook(leaf)
        if result is not None and result is not leaf:
            _reject_post_hook_result(hook, leaf, result)


def _reject_post_hook_result(hook, leaf, result):
    """PyTorch's errors for a post accumulate grad hook that returns something: what a
    tensor hook may not return is named as such; any other tensor than the leaf itself
    (which PyTorch's own example returns, from ``p.add_(...)``) is refused too."""
    if not isinstance(result, F.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    if result.dtype != leaf.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {F.typename(leaf)} got "
            f"{F.typename(result)})"
        )
    if tuple(result.shape) != tuple(leaf.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _before(node, grads: list, runs: bool, create_graph: bool) -> list:
    """What runs on a node's incoming gradients before it: tensor hooks, then (when the
    node runs) its pre-hooks, then retain_grad's copies. The engine calls it only for
    nodes that registered one of them."""
    if node._tensor_hooks:
        for i, hooks in node._tensor_hooks.items():
            if grads[i] is None:
                continue
            for hook in list(hooks.values()):
                r = hook(grads[i])
                if r is not None:
                    grads[i] = r
    if node._prehooks and runs:
        for hook in list(node._prehooks.values()):
            r = hook(tuple(grads))
            if r is not None:
                grads = list(r)
    if node._retained:
        for i, ref in node._retained.items():
            t = ref()
            if t is not None and grads[i] is not None:
                t.grad = grads[i] if create_graph else grads[i].detach()
    return grads


def _after(node, input_grads, grads: tuple):
    """A node's hooks, after it ran: each may replace the gradients it computed."""
    for hook in list(node._hooks.values()):
        r = hook(tuple(input_grads), grads)
        if r is not None:
            input_grads = tuple(r)
    return input_grads


def run_backward(
    outputs,
    grad_outputs,
    retain_graph,
    create_graph,
    inputs=None,
    capture=False,
    allow_unused=False,
):
    """Runs backward from `outputs`. With capture=True, returns the gradients of
    `inputs` instead of accumulating into leaves' .grad.

    >>> from flambeau.autograd.functional import run_backward
    >>> x = flambeau.tensor([2.0, 3.0], requires_grad=True)
    >>> run_backward((x * x).sum(), None, False, False, inputs=[x], capture=True)
    (tensor([4., 6.]),)
    """
    outputs = _as_tuple(outputs)
    grad_outputs = list(_as_tuple(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    for out in outputs:
        if not out.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    roots = _root_grads(outputs, grad_outputs)

    targets = {}  # (node, output_nr) -> position in inputs
    if inputs is not None:
        for i, t in enumerate(inputs):
            if isinstance(t, GradientEdge):  # the gradient flowing into that edge
                targets.setdefault((t.node, t.output_nr), []).append(i)
                continue
            if not t.requires_grad:
                raise RuntimeError(
                    f"One of the differentiated Tensors (#{i}) does not require grad"
                )
            targets.setdefault(_edge_of(t), []).append(i)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    root_edges = [_edge_of(o) for o in outputs]
    nodes = [n for n, _ in root_edges]
    # With inputs=, the part of the graph that cannot reach them does not run.
    target_nodes = {node for node, _ in targets} if inputs is not None else None
    task = GraphTask(nodes, target_nodes, executes_all=inputs is None and not capture)
    stack = _tasks.__dict__.setdefault("stack", [])
    stack.append(task)
    try:
        with set_grad_enabled(create_graph):
            _C._autograd_execute(
                nodes,
                [nr for _, nr in root_edges],
                roots,
                target_nodes,
                targets or None,
                captured,
                capture=capture,
                create_graph=create_graph,
                retain_graph=retain_graph,
                check_nan=anomaly_mode.is_enabled() and anomaly_mode.is_check_nan_enabled(),
            )
        for callback in task.callbacks:  # queued while the pass ran (multi-grad hooks)
            callback()
    finally:
        stack.pop()

    if inputs is not None and not capture:  # backward(inputs=...) on non-leaf tensors
        for t, g in zip(inputs, captured):
            if isinstance(t, F.Tensor) and t.grad_fn is not None and g is not None:
                t.grad = g if t.grad is None else t.grad + g
    if capture:
        for i, g in enumerate(captured):
            if g is None and not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (#{i}) appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        return tuple(captured)
    return None


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and bool(F.isnan(g).any()):
            where = "".join(node.trace) if node.trace else "(no traceback recorded)\n"
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.\n"
                f"The forward call that created it:\n{where}"
            )


def install() -> None:
    """Hands the engine's loop (the core's autograd_engine.cpp) this package's node
    classes and the Python pieces of a node's run."""
    _C._autograd_engine_install(
        AccumulateGrad, FormulaNode, _accumulate, _before, _after, _check_nan, fit_gradient
    )
