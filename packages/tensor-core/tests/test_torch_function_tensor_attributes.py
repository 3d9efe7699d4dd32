"""The Tensor methods and properties without a check of their own (bound by hand in C++,
or written in Python) take part in ``__torch_function__`` as PyTorch's do: ``t.size()``
hands over ``Tensor.size``, ``t.shape`` hands over ``Tensor.shape.__get__`` and
``t.requires_grad = False`` ``Tensor.requires_grad.__set__``, to Tensor subclasses and to
TorchFunctionModes alike, once; the default handling returns what the plain call does.

The names PyTorch 2.13 hands over for the calls below were read from PyTorch itself; the
oracle test compares them with it where it is installed."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import flambeau
from flambeau import _C
from flambeau._override_tables import _WRAPPED_ALIASES, _WRAPPED_METHODS, _WRAPPED_PROPERTIES
from flambeau_testing.dispatch_log import log_mode, log_subclass

T = flambeau.Tensor


class _Handed(Exception):
    """Raised by the recording class below instead of running the function."""


def _recording(L):
    """A subclass that records the function it is handed and stops the call there."""

    class Recording(L.Tensor):
        funcs: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.funcs.append(func)
            raise _Handed

    return Recording


def _handed_name(func) -> str:
    """Tensor.size -> "size"; Tensor.shape.__get__ -> "shape.__get__"."""
    if getattr(func, "__name__", None) in ("__get__", "__set__"):
        owner = func.__self__
        prop = getattr(owner, "__name__", None) or owner.fget.__name__
        return f"{prop}.{func.__name__}"
    return func.__name__


# ---- every wrapped name, handed over before anything runs ---------------------------


@pytest.mark.parametrize("name", _WRAPPED_METHODS.split())
def test_every_wrapped_method_is_handed_over_first(name):
    assert isinstance(inspect.getattr_static(T, name, None), _C._DispatchingMethod)
    Recording = _recording(flambeau)
    t = flambeau.ones(2, 3).as_subclass(Recording)
    Recording.funcs.clear()
    with pytest.raises(_Handed):
        getattr(t, name)()  # no arguments: handed over before they are parsed
    handed = _WRAPPED_ALIASES.get(name, name)
    assert Recording.funcs == [getattr(T, handed)]


@pytest.mark.parametrize("name", _WRAPPED_PROPERTIES.split())
def test_every_wrapped_property_hands_over_its_getter(name):
    assert isinstance(inspect.getattr_static(T, name, None), _C._DispatchingProperty)
    Recording = _recording(flambeau)
    t = flambeau.ones(2, 3).as_subclass(Recording)
    Recording.funcs.clear()
    with pytest.raises(_Handed):
        getattr(t, name)
    assert Recording.funcs == [getattr(T, name).__get__]


def test_a_mode_is_handed_property_reads_of_plain_tensors():
    t = flambeau.ones(2, 3)
    with log_mode(flambeau) as log:
        assert t.shape == (2, 3)
        assert t.dtype == flambeau.float32
        assert t.size(1) == 3
        assert len(t) == 2
    assert [_handed_name(f) for f in log.funcs] == [
        "shape.__get__",
        "dtype.__get__",
        "size",
        "__len__",
    ]


# ---- the calls PyTorch's tables show, as PyTorch 2.13 hands them over -----------------

CALLS = [  # (id, call on a 2x3 float tensor of the subclass, names handed over)
    ("shape", lambda t: t.shape, ["shape.__get__"]),
    ("size", lambda t: t.size(), ["size"]),
    ("size_dim", lambda t: t.size(1), ["size"]),
    ("stride", lambda t: t.stride(), ["stride"]),  # PyTorch lists it as ignored, yet hands it over
    ("dim", lambda t: t.dim(), ["dim"]),
    ("ndim", lambda t: t.ndim, ["ndim.__get__"]),
    ("ndimension", lambda t: t.ndimension(), ["dim"]),
    ("nelement", lambda t: t.nelement(), ["numel"]),
    ("dtype", lambda t: t.dtype, ["dtype.__get__"]),
    ("device", lambda t: t.device, ["device.__get__"]),
    ("len", lambda t: len(t), ["__len__"]),
    ("item", lambda t: t[0, 0].item(), ["__getitem__", "item"]),
    ("float", lambda t: float(t[0, 0]), ["__getitem__", "__float__"]),
    ("bool", lambda t: bool(t[0, 0]), ["__getitem__", "__bool__"]),
    ("tolist", lambda t: t.tolist(), ["tolist"]),
    ("numpy", lambda t: t.numpy(), ["numpy"]),
    ("requires_grad", lambda t: t.requires_grad, ["requires_grad.__get__"]),
    ("set_requires_grad", lambda t: setattr(t, "requires_grad", False), ["requires_grad.__set__"]),
    ("grad", lambda t: t.grad, ["grad.__get__"]),
    ("is_leaf", lambda t: t.is_leaf, ["is_leaf.__get__"]),
    ("T", lambda t: t.T, ["T.__get__"]),
    ("mT", lambda t: t.mT, ["mT.__get__"]),
    ("data", lambda t: t.data, ["data.__get__"]),
    ("layout", lambda t: t.layout, ["layout.__get__"]),
    ("is_contiguous", lambda t: t.is_contiguous(), ["is_contiguous"]),
    ("data_ptr", lambda t: t.data_ptr(), ["data_ptr"]),
    ("iter", lambda t: list(iter(t)), ["dim", "unbind"]),
    ("type", lambda t: t.type(), ["type"]),
    ("reduce_ex", lambda t: t.__reduce_ex__(2), ["__reduce_ex__"]),
]


def _names_seen(L, call):
    Logged = log_subclass(L)
    t = L.rand(2, 3).as_subclass(Logged)
    Logged.funcs.clear()
    call(t)
    return [_handed_name(f) for f in Logged.funcs]


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_a_subclass_is_handed_what_pytorch_hands_over(call, expected):
    assert _names_seen(flambeau, call) == expected


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_same_names_as_pytorch(call, expected):
    torch = pytest.importorskip("torch")
    assert _names_seen(torch, call) == expected


# ---- what the default handling returns ---------------------------------------------


def test_results_under_the_default_handling_match_plain_tensors():
    Logged = log_subclass(flambeau)
    plain = flambeau.arange(6.0).reshape(2, 3)
    t = plain.as_subclass(Logged)
    assert t.shape == (2, 3) and t.size(1) == 3 and t.stride() == (3, 1)
    assert t.dim() == t.ndim == 2 and t.numel() == 6 and len(t) == 2
    assert t.dtype == flambeau.float32 and t.device == flambeau.device("cpu")
    assert t.tolist() == plain.tolist()
    np.testing.assert_array_equal(t.numpy(), plain.numpy())
    assert float(t[1, 2]) == 5.0 and t[0, 1].item() == 1.0
    assert type(t.T) is Logged and t.T.shape == (3, 2)  # tensors come back re-classed
    assert [type(r) for r in t] == [Logged, Logged]
    np.testing.assert_array_equal(np.stack([r.numpy() for r in t]), plain.numpy())


def test_a_stored_gradient_is_returned_as_it_is():
    Logged = log_subclass(flambeau)
    t = flambeau.ones(2).as_subclass(Logged).requires_grad_()
    (t * 3).sum().backward()
    assert t.grad is t.grad  # grad is among the getters whose result is not re-classed
    np.testing.assert_array_equal(t.grad.numpy(), [3.0, 3.0])


def test_the_setter_still_checks_its_rules_after_handing_over():
    Logged = log_subclass(flambeau)
    leaf = flambeau.ones(2).as_subclass(Logged).requires_grad_()
    leaf.requires_grad = False
    assert not leaf.requires_grad
    nonleaf = (flambeau.ones(2, requires_grad=True) * 2).as_subclass(Logged)
    with pytest.raises(RuntimeError, match="leaf variables"):
        nonleaf.requires_grad = False


def test_iteration_gives_the_rows_and_their_gradients():
    x = flambeau.arange(6.0).reshape(3, 2).requires_grad_()
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    (rows[0] * 1 + rows[2] * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1], [0, 0], [2, 2]])
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(flambeau.tensor(1.0))


def test_an_override_can_answer_for_a_property():
    class Shaped(flambeau.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func == flambeau.Tensor.shape.__get__:  # a new method-wrapper each time
                return (7, 7)
            return super().__torch_function__(func, types, args, kwargs)

    t = flambeau.ones(2).as_subclass(Shaped)
    assert t.shape == (7, 7) and t.size() == (2,)


def test_disabling_the_protocol_reaches_the_attributes_directly():
    Recording = _recording(flambeau)
    t = flambeau.ones(2, 3).as_subclass(Recording)
    with flambeau._C.DisableTorchFunctionSubclass():
        assert t.shape == (2, 3) and t.dim() == 2 and t.tolist() == [[1.0] * 3] * 2


# ---- the wrappers as objects ---------------------------------------------------------


def test_the_wrappers_look_like_the_attributes_they_wrap():
    assert T.size is T.size and T.size.__name__ == "size" and T.size.__qualname__ == "Tensor.size"
    assert T.tolist.__doc__ and T.shape.__doc__ == T.shape.__wrapped__.__doc__
    assert T.real.fset is not None  # other attributes come from the wrapped property
    assert pickle.loads(pickle.dumps(T.size)) is T.size
    t = flambeau.ones(2, 3)
    assert T.size(t) == (2, 3) and T.shape.__get__(t) == (2, 3)
    with pytest.raises(AttributeError):
        t.shape = (3, 2)


def test_wrapping_again_changes_nothing():
    before = inspect.getattr_static(T, "dim"), inspect.getattr_static(T, "shape")
    flambeau.overrides.install_wrappers()
    assert (inspect.getattr_static(T, "dim"), inspect.getattr_static(T, "shape")) == before
    assert flambeau.ones(2, 2).dim() == 2


def test_arguments_reach_the_override_as_given():
    seen = []

    class Spy(flambeau.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func.__name__, len(args), dict(kwargs or {})))
            return super().__torch_function__(func, types, args, kwargs)

    t = flambeau.ones(2, 3).as_subclass(Spy)
    assert t.size(dim=1) == 3 and t.size(1) == 3
    assert T.size(t, dim=0) == 2  # the unbound method, self given positionally
    t.requires_grad = True
    assert seen == [("size", 1, {"dim": 1}), ("size", 2, {}), ("size", 1, {"dim": 0}),
                    ("__set__", 2, {})]  # fmt: skip
    with pytest.raises(TypeError):
        t.size(1, 2, 3)  # the wrapped method's own argument errors still come through


def test_a_subclass_among_later_arguments_takes_the_call():
    # The check covers every positional argument, as an operator's does.
    t = flambeau.zeros(4)
    Logged = log_subclass(flambeau)
    source = flambeau.tensor([5.0, 6.0]).as_subclass(Logged)
    Logged.funcs.clear()
    t.put_(flambeau.tensor([0, 3]), source)
    assert [_handed_name(f) for f in Logged.funcs] == ["put_"]
    assert t.tolist() == [5.0, 0.0, 0.0, 6.0]
