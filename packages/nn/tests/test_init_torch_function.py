"""nn.init's initialisers hand themselves to __torch_function__ where PyTorch's do
(uniform_, normal_, constant_, kaiming_uniform_: the function itself, once), and
ones_/zeros_ hand over the Tensor method they call (fill_, zero_)."""

from __future__ import annotations

import pytest

import flambeau
from flambeau_testing.dispatch_log import log_mode, log_subclass

CASES = [  # (initialiser, extra arguments, names handed over)
    ("uniform_", (), ["uniform_"]),
    ("normal_", (), ["normal_"]),
    ("constant_", (0.5,), ["constant_"]),
    ("kaiming_uniform_", (), ["kaiming_uniform_"]),
    ("ones_", (), ["fill_"]),
    ("zeros_", (), ["zero_"]),
]


def _handed(L, name, extra):
    Logged = log_subclass(L)
    t = L.empty(3, 4).as_subclass(Logged)
    Logged.funcs.clear()
    out = getattr(L.nn.init, name)(t, *extra)
    return out, [f.__name__ for f in Logged.funcs], Logged.funcs


@pytest.mark.parametrize(("name", "extra", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_subclass_is_handed_what_pytorch_hands_over(name, extra, expected):
    out, names, funcs = _handed(flambeau, name, extra)
    assert names == expected
    if expected == [name]:
        assert funcs[0] is getattr(flambeau.nn.init, name)  # the public function itself
    assert out.shape == (3, 4)


@pytest.mark.parametrize(("name", "extra", "expected"), CASES, ids=[c[0] for c in CASES])
def test_same_as_pytorch(name, extra, expected):
    torch = pytest.importorskip("torch")
    assert _handed(torch, name, extra)[1] == expected


def test_a_mode_sees_the_initialiser_once_and_it_still_fills():
    t = flambeau.empty(2, 2)
    with log_mode(flambeau) as log:
        flambeau.nn.init.constant_(t, 0.25)
    assert [f.__name__ for f in log.funcs] == ["constant_"]
    assert t.tolist() == [[0.25, 0.25], [0.25, 0.25]]
