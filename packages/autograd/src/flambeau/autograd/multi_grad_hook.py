"""register_multi_grad_hook: one hook over the gradients of several tensors."""

from __future__ import annotations

import threading
import weakref

from . import engine
from .recorder import accumulate_node

__all__ = ["register_multi_grad_hook"]


class _MultiHandle:
    """Removes the per-tensor hooks of a multi-grad hook."""

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _node_of(t):
    return t.grad_fn if t.grad_fn is not None else accumulate_node(t)


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> _MultiHandle:
    """Calls ``fn`` once per backward pass over the gradients of ``tensors``.

    ``mode="all"``: ``fn(grads)`` (a list in the order of ``tensors``) runs once every
    tensor that the pass reaches has its gradient; tensors it does not reach give None.
    ``mode="any"``: ``fn(grad)`` runs with the first gradient computed, once per pass.
    Returns a handle whose ``remove()`` unregisters it.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            raise AssertionError(
                f"Expected gradient function to be set: tensor {i} does not require grad"
            )
    lock = threading.Lock()

    if mode == "any":
        fired: weakref.WeakSet = weakref.WeakSet()  # the passes fn already ran in

        def any_hook(grad):
            task = engine.current_task()
            with lock:
                if task in fired:
                    return
                fired.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors))

    # Per backward pass: [gradients so far, how many are expected, how many came, done].
    passes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def finish(task) -> None:
        # At the end of the pass: a reached tensor whose gradient was None never called
        # its hook, so fn still runs with what arrived.
        entry = passes.pop(task, None)
        if entry is not None and not entry[3]:
            fn(entry[0])

    def all_hook_for(i: int):
        def hook(grad):
            task = engine.current_task()
            with lock:
                entry = passes.get(task)
                if entry is None:
                    expected = sum(_node_of(t) in task.nodes for t in tensors)
                    entry = passes[task] = [[None] * len(tensors), expected, 0, False]
                    task.callbacks.append(lambda: finish(task))
                entry[0][i] = grad
                entry[2] += 1
                ready = entry[2] >= entry[1] and not entry[3]
                entry[3] = entry[3] or ready
            if ready:
                fn(list(entry[0]))

        return hook

    return _MultiHandle(tuple(t.register_hook(all_hook_for(i)) for i, t in enumerate(tensors)))
