"""The helpers torch.nn.functional re-exports for its own plumbing, made honest for flambeau.

- The ``__torch_function__`` override protocol (flambeau.overrides, re-exported as
  torch.nn.functional re-exports torch.overrides'): the core's operators dispatch to a
  Tensor subclass's ``__torch_function__``, and functions written in Python take part with
  PyTorch's pattern (``if has_torch_function(args): return handle_torch_function(fn, ...)``).
- ``boolean_dispatch``: one public function that picks between two by a boolean argument.
- ``BroadcastingList1/2/3``: annotations for "a T or a sequence of T" arguments.
- The documentation-note dictionaries PyTorch formats into its docstrings.
"""

from __future__ import annotations

from flambeau.overrides import (  # noqa: F401 - re-exported
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)

__all__ = [
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "handle_torch_function",
    "boolean_dispatch",
    "BroadcastingList1",
    "BroadcastingList2",
    "BroadcastingList3",
    "reproducibility_notes",
    "sparse_support_notes",
    "tf32_notes",
]


# ---- boolean_dispatch -----------------------------------------------------------------------


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false with its arguments, by the boolean argument
    `arg_name` (keyword) or at position `arg_index`, `default` when it is not given.

    The docstring is the one of the two that has one (both having one is an error).

    >>> import flambeau.nn.functional as F
    >>> pool = F.boolean_dispatch("return_indices", 1, False,
    ...     if_true=lambda x, return_indices=False: ("values", "indices"),
    ...     if_false=lambda x, return_indices=False: "values", module_name=None, func_name="pool")
    >>> pool(0), pool(0, True), pool(0, return_indices=True)
    ('values', ('values', 'indices'), ('values', 'indices'))
    """
    if if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    doc = if_true.__doc__ if if_true.__doc__ is not None else if_false.__doc__

    def dispatched(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return (if_true if flag else if_false)(*args, **kwargs)

    if_true.__doc__ = if_false.__doc__ = dispatched.__doc__ = doc
    if module_name is not None:
        dispatched.__module__ = module_name
    if func_name is not None:
        dispatched.__name__ = dispatched.__qualname__ = func_name
    return dispatched


# ---- annotations ----------------------------------------------------------------------------


class _BroadcastingList:
    """``BroadcastingListN[T]``: a T, broadcast to N of them, or a sequence of N T's."""

    def __init__(self, length: int):
        self.length = length

    def __getitem__(self, item):
        return item | tuple[item, ...] | list[item]

    def __repr__(self) -> str:
        return f"BroadcastingList{self.length}"


BroadcastingList1 = _BroadcastingList(1)
BroadcastingList2 = _BroadcastingList(2)
BroadcastingList3 = _BroadcastingList(3)


# ---- documentation notes --------------------------------------------------------------------

reproducibility_notes = {
    "forward_reproducibility_note": (
        "flambeau runs this operation deterministically on the CPU; a backend plugin may not. "
        "See ``flambeau.use_deterministic_algorithms``."
    ),
    "backward_reproducibility_note": (
        "The backward pass of this operation is deterministic on the CPU; a backend plugin "
        "may accumulate gradients in a nondeterministic order."
    ),
    "cudnn_reproducibility_note": (
        "On a CUDA backend this operation may pick nondeterministic algorithms unless "
        "deterministic algorithms are requested."
    ),
}

sparse_support_notes = {
    "sparse_beta_warning": (
        "\n.. warning::\n    flambeau has no sparse tensor layouts yet: this operation takes "
        "dense tensors only.\n"
    ),
}

tf32_notes = {
    "tf32_note": (
        "On a CUDA backend this operation may use TensorFloat32 arithmetic where allowed; "
        "the CPU computes in full precision."
    ),
}
