"""The recorded graph: one Node per differentiable operation.

A Node knows how to turn the gradients of its outputs into gradients of its
inputs (``apply``), and where those go next (``next_functions``: one
``(node, output_nr)`` edge per differentiable input, or ``(None, 0)``). Leaves
that require grad end in an ``AccumulateGrad`` node that adds into ``.grad``.
"""

from __future__ import annotations

import sys
import traceback
from collections import OrderedDict
from collections.abc import Callable

import flambeau as F
from flambeau.utils.hooks import RemovableHandle


def zeros_for_none(grads, like) -> tuple:
    """grads with each None replaced by zeros shaped (and typed) like the matching tensor.

    >>> from flambeau.autograd.graph import zeros_for_none
    >>> zeros_for_none((None, flambeau.ones(2)), (flambeau.ones(3), flambeau.ones(2)))
    (tensor([0., 0., 0.]), tensor([1., 1.]))
    """
    return tuple(
        g if g is not None else F.zeros(tuple(t.shape), dtype=t.dtype) for g, t in zip(grads, like)
    )


def backward_name(op: str) -> str:
    """The name of the node that differentiates `op`, as PyTorch names it: the operator's
    words in CamelCase, leading and trailing underscores dropped, then ``Backward0``
    (``mse_loss`` -> ``MseLossBackward0``, ``_softmax`` -> ``SoftmaxBackward0``).

    >>> flambeau.autograd.graph.backward_name("mse_loss")
    'MseLossBackward0'
    """
    return "".join(word.capitalize() for word in op.split("_")) + "Backward0"


class Node(F._C._Node):
    """A recorded operation. Subclasses or instances provide ``_backward``.

    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> y = x * 2
    >>> isinstance(y.grad_fn, flambeau.autograd.graph.Node), y.grad_fn.name()
    (True, 'MulBackward0')
    >>> y.grad_fn.next_functions[0]
    (<AccumulateGrad object at 0x...>, 0)
    """

    # The fields the recorder writes and the engine reads are typed members of the
    # core's _C._Node: _name, next_functions, n_outputs, _formula, _saved, _released,
    # and the hook tables _hooks, _prehooks, _tensor_hooks (by output index) and
    # _retained (output index -> weakref, retain_grad), which read as an empty
    # read-only mapping until the first registration makes a dict. Nodes recorded in
    # C++ (the core's autograd_record.cpp) skip __init__.
    trace: list[str] | None = None  # creation traceback under detect_anomaly

    def __init__(self, name: str, next_functions, n_outputs: int = 1):
        self._name = name
        self.next_functions: tuple = tuple(next_functions)
        self.n_outputs = n_outputs
        self._released = False

    def _own(self, attr: str) -> dict:
        table = getattr(self, attr, None)
        if not isinstance(table, dict):  # none yet, or the shared empty mapping
            table = OrderedDict()  # a RemovableHandle refers to its table weakly
            setattr(self, attr, table)
        return table

    @property
    def metadata(self) -> dict:
        return self._own("_metadata")

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name} object at {id(self):#x}>"

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """fn(grad_inputs, grad_outputs) runs after the node; may return new grad_inputs."""
        hooks = self._own("_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """fn(grad_outputs) runs before the node; may return new grad_outputs."""
        hooks = self._own("_prehooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _register_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        hooks = self._own("_tensor_hooks").setdefault(output_nr, OrderedDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _record_trace(self) -> None:
        """Keeps the stack of the forward call that created this node, as PyTorch's anomaly
        mode does: it ends at the line that called the operation (or Function.apply),
        whichever path recorded it, the recording machinery's own frames left out."""
        caller = _caller_of_recording(sys._getframe(1))
        self.trace = traceback.format_stack(caller) if caller is not None else []

    def _backward(self, grads: tuple) -> tuple:
        raise NotImplementedError

    def _release(self) -> None:
        self._released = True


# The modules whose frames sit between an operation's caller and _record_trace: the
# recorder, in-place metadata ops and Function.apply; a composite's decomposition (in
# derivatives/) runs between two of the recorder's frames.
_PACKAGE = __name__.rpartition(".")[0]
_RECORDING_MODULES = frozenset(
    f"{_PACKAGE}.{name}" for name in ("recorder", "inplace_metadata", "function")
)
_DERIVATIVES = f"{_PACKAGE}.derivatives"


def _caller_of_recording(frame):
    """The frame that called the operation being recorded, given the innermost frame of
    its recording: the one just outside the outermost recorder frame of the run of
    recorder and derivatives frames that starts at `frame`. (A derivative formula that
    calls an operation under create_graph is that operation's caller.)"""
    caller = frame
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module in _RECORDING_MODULES:
            caller = frame.f_back
        elif not (module == _DERIVATIVES or module.startswith(_DERIVATIVES + ".")):
            break
        frame = frame.f_back
    return caller


class FormulaNode(Node):
    """A node whose backward is a derivative formula from derivatives.py.

    >>> y = flambeau.tensor([1.0], requires_grad=True).exp()
    >>> isinstance(y.grad_fn, flambeau.autograd.graph.FormulaNode), y.grad_fn.name()
    (True, 'ExpBackward0')
    """

    def __init__(self, name, next_functions, n_outputs, formula, saved):
        super().__init__(name, next_functions, n_outputs)
        self._formula = formula
        self._saved = saved  # SavedArgs

    def _backward(self, grads):
        saved = self._saved
        if saved is not None:
            return self._formula(grads, saved.unpack(self._name, self), self.next_functions)
        raise RuntimeError(
            f"Trying to backward through the graph a second time (or directly access saved "
            f"tensors after they have already been freed) in {self._name}. Saved "
            "intermediate values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward through the "
            "graph a second time or if you need to access saved tensors after calling "
            "backward."
        )

    def _release(self):
        self._released = True
        self._saved = None


class AccumulateGrad(Node):
    """The end of the graph for a leaf: adds the incoming gradient into ``leaf.grad``.

    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> acc = (x * 2).grad_fn.next_functions[0][0]
    >>> type(acc).__name__, acc.variable is x
    ('AccumulateGrad', True)
    """

    def __init__(self, leaf):
        super().__init__("AccumulateGrad", (), 1)
        self.variable = leaf
        self._post_hooks: dict[int, Callable] = OrderedDict()

    def register_post_accumulate_grad_hook(self, fn) -> RemovableHandle:
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle


class ViewInfo:
    """The geometry of a view in its root's storage, in elements of the view's dtype
    (view_as_real, real and imag see complex storage as floats).

    >>> base = flambeau.zeros(4)
    >>> info = flambeau.autograd.graph.ViewInfo(base, base[1:3])
    >>> info.size, info.stride, info.offset, info.root is base
    ((2,), (1,), 1, True)
    """

    __slots__ = ("root", "root_fn", "size", "stride", "offset", "dtype")

    def __init__(self, base, view):
        parent = base._view
        self.root = parent.root if parent is not None else base
        self.root_fn = self.root.grad_fn  # the history this view was taken from
        self.size = tuple(view.shape)
        self.stride = tuple(view.stride())
        self.offset = view.storage_offset()
        self.dtype = view.dtype


class GradientEdge(tuple):
    """An edge of the graph, ``(node, output_nr, ownership_token)``: where the gradient of
    one tensor is computed (PyTorch's namedtuple; ``ownership_token`` is unused). It can
    stand for the tensor in ``autograd.grad``'s inputs.

    >>> x = flambeau.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> edge = flambeau.autograd.graph.get_gradient_edge(y)
    >>> edge.node.name(), edge.output_nr
    ('MulBackward0', 0)
    >>> flambeau.autograd.grad(y.sum(), edge)
    (tensor([1., 1.]),)
    """

    __slots__ = ()
    _fields = ("node", "output_nr", "ownership_token")

    def __new__(cls, node, output_nr, ownership_token=None):
        return tuple.__new__(cls, (node, output_nr, ownership_token))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])
    ownership_token = property(lambda self: self[2])

    def __repr__(self):
        return (
            f"GradientEdge(node={self.node!r}, output_nr={self.output_nr}, "
            f"ownership_token={self.ownership_token!r})"
        )


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge where ``tensor``'s gradient is computed: its ``grad_fn`` (and which of
    its outputs), or a leaf's AccumulateGrad node.

    >>> x = flambeau.ones(2, requires_grad=True)
    >>> flambeau.autograd.graph.get_gradient_edge(x).node.name()
    'AccumulateGrad'
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    from .engine import _edge_of  # the engine imports this module

    return GradientEdge(*_edge_of(tensor))


def increment_version(tensor) -> None:
    """Marks ``tensor`` (or each tensor of an iterable) as modified in place, as an
    in-place operator would: for code that writes a tensor's memory behind autograd's
    back (a custom kernel, NumPy on a shared array), so that a saved tensor's staleness
    is still caught at backward. Inference tensors have no version and are skipped.

    >>> x = flambeau.ones(2)
    >>> v = x._version
    >>> flambeau.autograd.graph.increment_version(x)
    >>> x._version == v + 1
    True
    """
    tensors = (tensor,) if isinstance(tensor, F.Tensor) else tuple(tensor)
    for t in tensors:
        F._C._increment_version(t)


# PyTorch's torch.autograd.graph also holds these; they live in their own modules.
from .saved_tensors import (  # noqa: E402,F401
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


def __getattr__(name):
    if name == "register_multi_grad_hook":  # it builds on the engine, which imports this
        from .multi_grad_hook import register_multi_grad_hook

        return register_multi_grad_hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
