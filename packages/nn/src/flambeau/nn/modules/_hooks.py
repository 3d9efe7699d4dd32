"""Hook handles and the machinery behind full backward hooks."""

from __future__ import annotations

import functools
import itertools
import weakref
from collections import OrderedDict

import flambeau

_ids = itertools.count()


class RemovableHandle:
    """Returned by hook registration; ``remove()`` takes the hook out of every table it is in."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
        extra = [] if extra_dict is None else extra_dict
        extra = extra if isinstance(extra, list) else [extra]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None and self.id in table:
                del table[self.id]

    def __getstate__(self):
        # The tables travel with the module that owns them; pickle keeps them the same objects.
        tables = tuple(ref() for ref in (self.hooks_dict_ref, *self.extra_dict_ref))
        return (self.id, tables)

    def __setstate__(self, state) -> None:
        global _ids
        self.id, tables = state
        # Ids made from now on must not collide with the loaded one.
        _ids = itertools.count(max(next(_ids), self.id + 1))
        hooks, *extra = [OrderedDict() if t is None else t for t in tables]
        self.hooks_dict_ref = weakref.ref(hooks)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


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


def _tensor_positions(values):
    return [i for i, v in enumerate(values) if isinstance(v, flambeau.Tensor)]


class BackwardHook:
    """Runs a module's full backward (pre-)hooks around the gradients of its inputs/outputs.

    The positional tensor inputs and the outputs are routed through identity nodes:
    the output node sees grad_output (and runs the pre-hooks, which may replace it),
    the input node sees grad_input (and runs the hooks, which may replace it).
    """

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
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
        for hook in self.hooks:
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
        if not self.hooks:
            return None
        grad_input = self._run_hooks(self._pack(self.input_positions, grads, self.n_inputs))
        return tuple(grad_input[i] for i in self.input_positions)

    def _on_output_grads(self, grads):
        grad_outputs = self._pack(self.output_positions, grads, self.n_outputs)
        for hook in self.pre_hooks:
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
        if not self.inputs_wrapped and self.hooks:
            # No input requires grad: the hooks run now, with grad_input all None.
            self._run_hooks((None,) * self.n_inputs)
        return tuple(grad_outputs[i] for i in self.output_positions)

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
