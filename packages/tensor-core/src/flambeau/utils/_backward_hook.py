"""BackwardHook: the machinery behind nn.Module's full backward hooks (flambeau.utils.hooks
exports it, as torch.utils.hooks does). It needs flambeau.autograd, imported when a hook
first wraps tensors that require grad."""

from __future__ import annotations

import functools
import sys
import warnings

import flambeau


@functools.cache
def _identity_node():
    """The node class that passes gradients through unchanged (``on_grads`` may observe or
    replace them); made on first use, so that importing flambeau.nn does not import
    flambeau.autograd."""
    from flambeau.autograd.graph import Node

    class IdentityNode(Node):
        def __init__(self, name, edges, on_grads):
            super().__init__(name, edges, len(edges))
            self._on_grads = on_grads

        def _backward(self, grads):
            replaced = self._on_grads(tuple(grads))
            return tuple(grads) if replaced is None else tuple(replaced)

    return IdentityNode


def _wrap(tensors, name, on_grads):
    """New views of `tensors` whose gradients pass through one identity node."""
    from flambeau.autograd.recorder import attach, grad_edge

    edges = [grad_edge(t) for t in tensors]
    node = _identity_node()(name, edges, on_grads)
    out = []
    for i, t in enumerate(tensors):
        if t.requires_grad:
            v = t.detach()
            attach(v, node, i)
            out.append(v)
        else:
            out.append(t)
    return out


_NO_INPUT_GRAD = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


def _caller_outside_flambeau() -> int:
    """The stacklevel, for its caller's warnings.warn, of the innermost frame outside
    flambeau's packages: the user's ``backward()``, through the autograd engine."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("flambeau"):
        frame, level = frame.f_back, level + 1
    return level


def _tensor_positions(values):
    return [i for i, v in enumerate(values) if isinstance(v, flambeau.Tensor)]


class BackwardHook:
    """Runs a module's full backward (pre-)hooks around the gradients of its inputs/outputs.

    The positional tensor inputs and the outputs are routed through identity nodes:
    the output node sees grad_output (and runs the pre-hooks, which may replace it),
    the input node sees grad_input (and runs the hooks, which may replace it).
    ``hook(module, grad_input, grad_output)`` and ``pre_hook(module, grad_output)`` get
    tuples with None where an argument or output is not a tensor.

    >>> from flambeau.utils.hooks import BackwardHook
    >>> calls = []
    >>> hook = BackwardHook("double", [lambda m, gin, gout: calls.append((m, gin, gout))], [])
    >>> (x,) = hook.setup_input_hook((flambeau.ones(2, requires_grad=True),))
    >>> hook.setup_output_hook(x * 2).sum().backward()
    >>> calls
    [('double', (tensor([2., 2.]),), (tensor([1., 1.]),))]
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = []
        self.inputs_wrapped = False

    def _pack(self, positions, grads, n):
        full = [None] * n
        for pos, g in zip(positions, grads):
            full[pos] = g
        return tuple(full)

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        self.input_positions = _tensor_positions(args)
        tensors = [args[i] for i in self.input_positions]
        if not (flambeau.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args
        self.inputs_wrapped = True
        wrapped = _wrap(tensors, "BackwardHookFunctionBackward", self._on_input_grads)
        new_args = list(args)
        for pos, t in zip(self.input_positions, wrapped):
            new_args[pos] = t
        return tuple(new_args)

    def _run_hooks(self, grad_input):
        for hook in self.user_hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got "
                    f"{len(result)}, but expected {len(grad_input)}"
                )
            grad_input = result
        return grad_input

    def _on_input_grads(self, grads):
        if not self.user_hooks:
            return None
        grad_input = self._run_hooks(self._pack(self.input_positions, grads, self.n_inputs))
        return tuple(grad_input[i] for i in self.input_positions)

    def _on_output_grads(self, grads):
        grad_outputs = self._pack(self.output_positions, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_outputs):
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(result)}, but expected {len(grad_outputs)}"
                )
            grad_outputs = result
        self.grad_outputs = grad_outputs
        if not self.inputs_wrapped:
            warnings.warn(_NO_INPUT_GRAD, stacklevel=_caller_outside_flambeau())
            self._run_hooks_without_input_grads()
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _run_hooks_without_input_grads(self):
        """No input requires grad: the hooks run now, with grad_input all None, and may
        return nothing else."""
        grad_input = (None,) * self.n_inputs
        for hook in self.user_hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None and not (
                isinstance(result, tuple) and all(g is None for g in result)
            ):
                raise RuntimeError(
                    "Backward hook for Modules where no input requires gradient should always "
                    "return None or None for all gradients."
                )

    def setup_output_hook(self, result):
        single = isinstance(result, flambeau.Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple):
            return result
        self.n_outputs = len(outputs)
        self.output_positions = _tensor_positions(outputs)
        tensors = [outputs[i] for i in self.output_positions]
        if not any(t.requires_grad for t in tensors):
            return result
        wrapped = _wrap(tensors, "BackwardHookFunctionBackward", self._on_output_grads)
        new = list(outputs)
        for pos, t in zip(self.output_positions, wrapped):
            new[pos] = t
        return new[0] if single else tuple(new)
