"""The plumbing torch.nn.functional re-exports: the __torch_function__ helpers (for user
code following PyTorch's override pattern), boolean_dispatch, BroadcastingList, doc notes."""

from __future__ import annotations

import pytest

import flambeau
from flambeau.nn import functional as F


class Logged:
    """A tensor-like that records the calls routed to it."""

    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((cls.__name__, func.__name__, types))
        return f"{cls.__name__}:{func.__name__}"


class LoggedChild(Logged):
    pass


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def scaled(x, factor=2.0):
    """A user function written in PyTorch's overridable style."""
    if F.has_torch_function_unary(x):
        return F.handle_torch_function(scaled, (x,), x, factor=factor)
    return x * factor


def test_has_torch_function_only_for_overriding_types():
    t = flambeau.ones(2)
    assert not F.has_torch_function((t, 1, "a", None))
    assert not F.has_torch_function_unary(t)
    assert not F.has_torch_function_variadic(t, t, 3.0)
    assert F.has_torch_function([t, Logged()])
    assert F.has_torch_function_unary(Logged())
    assert F.has_torch_function_variadic(t, Declines())


def test_handle_torch_function_dispatches_subclasses_first():
    assert scaled(flambeau.ones(2)).tolist() == [2.0, 2.0]
    Logged.calls.clear()
    assert scaled(Logged()) == "Logged:scaled"
    parent, child = Logged(), LoggedChild()
    result = F.handle_torch_function(scaled, (parent, child), parent, child)
    assert result == "LoggedChild:scaled"  # the subclass is asked before its base class
    assert Logged.calls[-1] == ("LoggedChild", "scaled", (LoggedChild, Logged))


def test_handle_torch_function_skips_not_implemented_and_errors_when_all_decline():
    declines, logged = Declines(), Logged()
    assert F.handle_torch_function(scaled, (declines, logged), declines) == "Logged:scaled"
    with pytest.raises(TypeError, match="no implementation found for '.*scaled' on types"):
        F.handle_torch_function(scaled, (declines,), declines)


def test_boolean_dispatch():
    def with_indices(x, return_indices=False):
        return ("pair", x)

    def without_indices(x, return_indices=False):
        """Doc of the plain variant."""
        return ("single", x)

    fn = F.boolean_dispatch("return_indices", 1, False, with_indices, without_indices,
                            "mymod", "pool")  # fmt: skip
    assert fn(1) == ("single", 1)
    assert fn(1, True) == ("pair", 1)
    assert fn(1, return_indices=True) == ("pair", 1)
    assert fn.__name__ == "pool" and fn.__module__ == "mymod"
    assert fn.__doc__ == with_indices.__doc__ == "Doc of the plain variant."

    def documented(x):
        """Another doc."""

    with pytest.raises(RuntimeError, match="only one function can have a docstring"):
        F.boolean_dispatch("flag", 0, False, documented, without_indices, None, None)


def test_broadcasting_lists_and_doc_notes():
    assert F.BroadcastingList2[int] == int | tuple[int, ...] | list[int]
    assert repr(F.BroadcastingList3) == "BroadcastingList3"
    assert F.BroadcastingList1 is not F.BroadcastingList2
    for notes, keys in [
        (F.reproducibility_notes, {"forward_reproducibility_note", "backward_reproducibility_note",
                                   "cudnn_reproducibility_note"}),
        (F.sparse_support_notes, {"sparse_beta_warning"}),
        (F.tf32_notes, {"tf32_note"}),
    ]:  # fmt: skip
        assert set(notes) == keys and all(isinstance(v, str) and v for v in notes.values())
    # PyTorch formats these into docstrings.
    assert "CPU" in "{forward_reproducibility_note}".format(**F.reproducibility_notes)
