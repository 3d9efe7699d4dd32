"""PyTorch's symbolic-size names on concrete numbers (sym_max, sym_int, ...), the
Sym* types no value is an instance of, cond run eagerly, and symeig's removal message:
hand-derived values, and PyTorch's own answers where it is installed."""

from __future__ import annotations

import math

import pytest

import flambeau

CASES = [  # (function name, args, expected)
    ("sym_max", (2, 3), 3),
    ("sym_max", (2, 3.5), 3.5),
    ("sym_max", (4, 1.0), 4.0),
    ("sym_min", (2, 3), 2),
    ("sym_min", (2.5, 3), 2.5),
    ("sym_int", (3.7,), 3),
    ("sym_int", (-3.7,), -3),
    ("sym_int", (True,), 1),
    ("sym_float", (2,), 2.0),
    ("sym_not", (True,), False),
    ("sym_ite", (True, "t", "f"), "t"),
    ("sym_ite", (False, "t", "f"), "f"),
    ("sym_sqrt", (4,), 2.0),
    ("sym_sum", ([1, 2, 3],), 6),
    ("sym_sum", ([1.5, 2],), 3.5),
    ("sym_fresh_size", (4,), 4),
]


@pytest.mark.parametrize(("name", "args", "expected"), CASES)
def test_values_on_plain_numbers(name, args, expected):
    got = getattr(flambeau, name)(*args)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("name", "args", "expected"), CASES)
def test_same_values_as_pytorch(name, args, expected):
    torch = pytest.importorskip("torch")
    got = getattr(torch, name)(*args)
    assert got == expected and type(got) is type(expected)


def test_tensors_and_non_numbers_are_refused_as_pytorch_does():
    with pytest.raises(AssertionError, match="expected SymBool or bool"):
        flambeau.sym_ite(flambeau.tensor(True), 1, 2)
    with pytest.raises(AssertionError, match="got <class 'str'>"):
        flambeau.sym_max("a", 1)
    with pytest.raises(AssertionError):
        flambeau.sym_max(flambeau.tensor(2), 3)


def test_constrain_range_checks_a_concrete_value():
    flambeau.sym_constrain_range(3, min=0, max=5)
    flambeau.sym_constrain_range(3, min=0)
    flambeau.sym_constrain_range_for_size(5, min=0, max=10)
    with pytest.raises(RuntimeError, match=r"Invalid value range for 5 between \[0, 3\]"):
        flambeau.sym_constrain_range(5, min=0, max=3)


def test_sym_types_have_no_instances():
    for cls in (flambeau.SymInt, flambeau.SymFloat, flambeau.SymBool):
        assert not isinstance(3, cls) and not isinstance(2.0, cls) and not isinstance(True, cls)
        with pytest.raises(TypeError, match="no symbolic shapes"):
            cls(3)


def test_cond_runs_the_chosen_branch():
    x = flambeau.tensor([1.0, -2.0])
    assert flambeau.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,)).tolist() == [-1.0, 2.0]
    assert flambeau.cond(True, lambda t: t + 1, lambda t: t - 1, [x]).tolist() == [2.0, -1.0]
    assert flambeau.cond(flambeau.tensor([1.0]), lambda: "yes", lambda: "no") == "yes"
    assert flambeau.cond(0, lambda: "yes", lambda: "no") == "no"
    with pytest.raises(RuntimeError, match="single-element tensor"):
        flambeau.cond(flambeau.tensor([True, False]), lambda t: t, lambda t: t, (x,))
    with pytest.raises(RuntimeError, match="callable"):
        flambeau.cond(True, 1, lambda: 0)


def test_symeig_says_what_replaces_it():
    with pytest.raises(RuntimeError, match=r"linalg\.eigh") as info:
        flambeau.symeig(flambeau.eye(2))
    assert "removed" in str(info.value)
    assert math.isclose(flambeau.sym_sqrt(2), math.sqrt(2))
