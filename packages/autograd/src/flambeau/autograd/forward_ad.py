"""flambeau.autograd.forward_ad: forward-mode automatic differentiation, PyTorch's API.

Inside a dual level, ``make_dual(x, t)`` makes a "dual tensor": x's value, carrying
the tangent t; operations on it propagate the tangent, and ``unpack_dual(y)`` gives
y's value and its tangent J t (J the Jacobian of y with respect to x).

flambeau records graphs for reverse mode only, so tangents are computed lazily from
the reverse-mode graph (the double-vjp identity, flambeau.autograd.double_vjp): a dual
tensor is a tensor that requires grad, and ``unpack_dual(y)`` runs two backward passes
from y to every dual of the level (summing their contributions). What follows from it:

- the operations between make_dual and unpack_dual must be recorded: under
  ``no_grad`` they carry no tangent (PyTorch's forward mode ignores grad mode);
- a dual tensor, and what is computed from it, reports ``requires_grad=True`` inside
  the level; leaving the level drops the tangents (and the dual's requires_grad when its
  primal did not require grad);
- a tangent is computed in its primal's dtype;
- each operation's backward formula must itself be differentiable (as for
  double backward);
- a tangent that keeps a graph (its primal or tangent requires grad) shares it with
  the primal's: a backward pass through one frees the other's unless
  ``retain_graph=True``.

A custom ``autograd.Function`` that defines ``jvp`` has it used for its outputs'
tangents (with ``ctx.save_for_forward``); one without ``jvp`` gets them through its
``backward`` when that is differentiable, and raises PyTorch's NotImplementedError
when it is ``once_differentiable``.

>>> import flambeau.autograd.forward_ad as fwAD
>>> x = flambeau.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, flambeau.tensor([1.0, 0.0])) ** 2
...     fwAD.unpack_dual(y).tangent
tensor([2., 0.])
"""

from __future__ import annotations

import functools
import weakref
from collections import namedtuple

import flambeau as F

from . import function as _function  # it imports this module: attributes read late
from .double_vjp import Linearized, lower, reaches_outside
from .grad_mode import enable_grad

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

_NESTED = "Nested forward mode AD is not supported at the moment"
_JVP_MISSING = (
    "You must implement the jvp function for custom autograd.Function to use it with "
    "forward mode AD."
)


class _Dual:
    """What the level knows of one tensor with a tangent: the tensor the user holds,
    the tensor reverse mode differentiates with respect to (`capture`: never handed
    out, so never modified in place), and the tangent."""

    def __init__(self, tensor, capture, tangent, *, hidden_leaf, cut_node=None):
        self.tensor = tensor
        self.version = tensor._version
        self.node = tensor.grad_fn  # the alias node that made it
        self.capture = capture
        self.tangent = tangent  # as given (unpack_dual of the dual returns it as is)
        self.math_tangent = tangent if tangent.dtype == capture.dtype else tangent.to(capture.dtype)
        self.hidden_leaf = hidden_leaf  # capture is a leaf made for this dual
        self.cut_node = cut_node  # a custom Function's node whose jvp gave the tangent


class _Level:
    def __init__(self, index: int):
        self.index = index
        self.duals: list[_Dual] = []
        self.by_id: dict[int, _Dual] = {}
        self.in_tangent_pass = False

    def add(self, dual: _Dual) -> None:
        self.duals.append(dual)
        self.by_id[id(dual.tensor)] = dual

    def own(self, t):
        """The entry of a dual tensor of this level, unmodified since it was made."""
        d = self.by_id.get(id(t))
        return d if d is not None and d.tensor is t and t._version == d.version else None

    def depends(self, t) -> bool:
        """Whether t's graph reaches a dual of this level."""
        if not (isinstance(t, F.Tensor) and t.requires_grad and self.duals):
            return False
        from .engine import _edge_of

        targets = {_edge_of(d.capture)[0] for d in self.duals}
        stack, seen = [t.grad_fn if t.grad_fn is not None else _edge_of(t)[0]], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            if node in targets:
                return True
            seen.add(id(node))
            stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()))
        return False

    def tangents_of(self, outputs):
        """The tangents of `outputs`: J t summed over the level's duals (None for an
        output that depends on none of them), attached to a graph only where a primal or
        tangent that requires grad outside the level makes one."""
        captures = [d.capture for d in self.duals]
        keep = F.is_grad_enabled() and (
            reaches_outside(outputs, _HIDDEN)
            or any(d.math_tangent.requires_grad for d in self.duals)
        )
        self.in_tangent_pass = True
        try:
            lin = Linearized(outputs, captures)
            jvs = lin.apply([d.math_tangent for d in self.duals], create_graph=keep)
        finally:
            self.in_tangent_pass = False
        local = _HIDDEN | lin.local_ids
        out = []
        for o, jv in zip(outputs, jvs):
            if jv is None and self.depends(o):  # its derivative is a constant zero
                jv = F.zeros_like(o)
            out.append(None if jv is None else lower(jv, local, keep))
        return out


_current: _Level | None = None
# The ids of the leaves made for dual tensors (alive): graphs reaching only these were
# recorded for forward AD alone, and results are detached from them.
_HIDDEN: set[int] = set()


@functools.cache
def _alias():
    """The identity, as a custom Function: the tensor it hands out aliases its input's
    memory but is no view of it, so that modifying it in place leaves the input (the
    capture reverse mode differentiates with respect to) alone."""

    class _DualAlias(_function.Function):
        _forward_ad_internal = True

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    return _DualAlias


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__module__ = __name__
UnpackedDualTensor.__doc__ = """What :func:`unpack_dual` returns: the namedtuple
``(primal, tangent)`` of a tensor's value and its tangent (None for a tensor without).

>>> import flambeau.autograd.forward_ad as fwAD
>>> fwAD.unpack_dual(flambeau.ones(2))
UnpackedDualTensor(primal=tensor([1., 1.]), tangent=None)
"""


def enter_dual_level():
    """Enters a new forward-AD level and returns its index (0: levels do not nest).

    The level is the one :func:`make_dual` and :func:`unpack_dual` use by default;
    prefer the :class:`dual_level` context manager, which also leaves it. Entering a
    level while one is active raises RuntimeError (PyTorch does not support nested
    forward AD either: nest ``flambeau.func.jvp`` for higher-order derivatives).

    >>> import flambeau.autograd.forward_ad as fwAD
    >>> fwAD.enter_dual_level()
    0
    >>> fwAD.exit_dual_level()
    """
    global _current
    if _current is not None:
        raise RuntimeError(_NESTED)
    _current = _Level(0)
    return _current.index


def exit_dual_level(*, level=None):
    """Leaves the current forward-AD level, dropping every tangent made in it.

    After it, :func:`unpack_dual` returns no tangent, and a dual tensor whose primal
    did not require grad is a plain tensor again. Only the latest level can be left.

    >>> import flambeau.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> d = fwAD.make_dual(flambeau.ones(2), flambeau.ones(2))
    >>> fwAD.exit_dual_level(level=level)
    >>> fwAD.unpack_dual(d).tangent is None, d.requires_grad
    (True, False)
    """
    global _current
    index = (_current.index if _current is not None else -1) if level is None else level
    if index < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _current is None or index != _current.index:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    leaving, _current = _current, None
    for d in leaving.duals:
        if d.cut_node is not None:
            d.cut_node._fw_cut = None
        if d.hidden_leaf and d.tensor.grad_fn is d.node:
            d.tensor.detach_()  # a dual not modified in place: a plain tensor again


def _level_for(level, what: str):
    if level is not None and (_current is None or level != _current.index):
        raise RuntimeError(f"Invalid level given to {what}")
    return _current


def _check_differentiable_dtype(t, what: str) -> None:
    if not (t.is_floating_point() or t.is_complex()):
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: ``tensor``'s value (sharing its memory) with ``tangent`` attached,
    for computing Jacobian-vector products by forward-mode AD.

    Must be called inside a dual level (:class:`dual_level`). ``tangent`` has
    ``tensor``'s shape; both are floating point or complex. Operations on the result
    carry the tangent along, and :func:`unpack_dual` reads it back. The result stays on
    ``tensor``'s graph when ``tensor`` requires grad, and the tangents read back are
    differentiable by ordinary autograd with respect to ``tensor`` and ``tangent`` when
    they require grad.

    >>> import flambeau.autograd.forward_ad as fwAD
    >>> x = flambeau.tensor([0.0, 1.0])
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(x, flambeau.tensor([1.0, 1.0]))
    ...     fwAD.unpack_dual(flambeau.sin(d)).tangent
    tensor([1.0000, 0.5403])
    """
    if level is None and _current is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure "
            "to enter_dual_level() first."
        )
    lvl = _level_for(level, "_make_dual")
    _check_differentiable_dtype(tensor, "primal")
    _check_differentiable_dtype(tangent, "tangent")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if lvl.own(tensor) is not None or lvl.depends(tensor):
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {lvl.index} is not supported."
        )
    with enable_grad():
        hidden_leaf = not tensor.requires_grad
        # The capture: a tensor of its own, so that reverse mode reads the derivative with
        # respect to this dual; a view of `tensor` keeps `tensor`'s own graph attached.
        if hidden_leaf:
            capture = tensor.detach().requires_grad_(True)
            _HIDDEN.add(id(capture))
            weakref.finalize(capture, _HIDDEN.discard, id(capture))
        else:
            capture = tensor.view_as(tensor)
        dual = _alias().apply(capture)
    lvl.add(_Dual(dual, capture, tangent, hidden_leaf=hidden_leaf))
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: a tensor's value and its tangent at the
    level (the current one by default).

    The tangent is the Jacobian-vector product of ``tensor`` with respect to the level's
    dual tensors (summed over them), None when ``tensor`` depends on none of them or
    no level is active. ``primal`` keeps the graph of tensors that require grad outside
    the level, and only that; the tangent likewise (it is differentiable with respect to
    the primals and tangents that require grad).

    >>> import flambeau.autograd.forward_ad as fwAD
    >>> x, w = flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0, 4.0])
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(x, flambeau.tensor([1.0, 0.0]))
    ...     primal, tangent = fwAD.unpack_dual((d * w).sum())
    >>> primal, tangent
    (tensor(11.), tensor(3.))
    >>> fwAD.unpack_dual(x)
    UnpackedDualTensor(primal=tensor([1., 2.]), tangent=None)
    """
    if not (isinstance(tensor, F.Tensor) and tensor.requires_grad):
        return UnpackedDualTensor(tensor, None)
    primal = lower(tensor, _HIDDEN, F.is_grad_enabled())
    lvl = _current
    own = lvl.own(tensor) if lvl is not None else None
    if lvl is None or (own is None and not lvl.depends(tensor)):
        # No tangent: no level (the one they were made at, if any, is gone), or none
        # reaches this tensor (whatever level was asked for, as in PyTorch).
        return UnpackedDualTensor(primal, None)
    if level is not None and level != lvl.index:
        raise RuntimeError("Invalid level given to _fw_primal")
    if own is not None:
        return UnpackedDualTensor(primal, own.tangent)
    (tangent,) = lvl.tangents_of([tensor])
    return UnpackedDualTensor(primal, tangent)


class dual_level:  # noqa: N801 - PyTorch's name
    """Context manager (or decorator) for forward AD: :func:`make_dual` and
    :func:`unpack_dual` work inside it, and leaving it drops every tangent made in it.

    ``with dual_level() as level`` gives the level's index. Levels do not nest.

    >>> import flambeau.autograd.forward_ad as fwAD
    >>> x = flambeau.tensor([1.0, 2.0])
    >>> with fwAD.dual_level():
    ...     out = fwAD.make_dual(x, flambeau.ones(2)) * 3
    ...     fwAD.unpack_dual(out).tangent
    tensor([3., 3.])
    >>> fwAD.unpack_dual(out).tangent is None  # the level is gone
    True
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


# ---- custom autograd.Function -------------------------------------------------------------


def in_tangent_pass() -> bool:
    """Whether tangents are being computed (a custom Function's node whose outputs got
    their tangents from its jvp passes no gradient on then)."""
    return _current is not None and _current.in_tangent_pass


def function_input_tangents(cls, args):
    """The tangents a custom Function's jvp receives (zeros for a tensor input without
    one, None for other arguments), or None when forward AD does not concern this call.

    Raises PyTorch's NotImplementedError when the Function has no jvp and its backward
    cannot give the tangents either (it is missing or once_differentiable)."""
    lvl = _current
    if lvl is None or not lvl.duals or getattr(cls, "_forward_ad_internal", False):
        return None
    if not F.is_grad_enabled():
        return None
    if not any(isinstance(a, F.Tensor) and lvl.depends(a) for a in args):
        return None
    if cls.jvp is _function.Function.jvp:
        backward = cls.vjp if cls.vjp is not _function.Function.vjp else cls.backward
        once = getattr(backward, "_once_differentiable", False)
        if backward is _function.Function.backward or once:
            raise NotImplementedError(_JVP_MISSING)
        return None  # the tangents come through the differentiable backward
    tangents = []
    for a in args:
        if not isinstance(a, F.Tensor):
            tangents.append(None)
            continue
        t = unpack_dual(a).tangent if lvl.depends(a) else None
        tangents.append(F.zeros_like(a) if t is None else t)
    return tangents


def mark_jvp_outputs(node, outputs, tangents, dirty_ids):
    """Registers a custom Function's outputs as dual tensors with the tangents its jvp
    gave; returns the outputs to hand out (aliases of the differentiable ones)."""
    lvl = _current
    tangents = tangents if isinstance(tangents, tuple) else (tangents,)
    node._fw_cut = lvl
    handed = []
    for o, t in zip(outputs, tangents):
        if not (isinstance(o, F.Tensor) and o.grad_fn is node and isinstance(t, F.Tensor)):
            handed.append(o)
            continue
        # A Function that modified its input in place returns it: it stays that object.
        out = o if id(o) in dirty_ids else _alias().apply(o)
        t = lower(t, _HIDDEN, F.is_grad_enabled())  # only the graph the caller built
        lvl.add(_Dual(out, o, t, hidden_leaf=False, cut_node=node))
        handed.append(out)
    return handed + list(outputs[len(handed) :])
