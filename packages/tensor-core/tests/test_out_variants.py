"""out= of every operator the table gives an out variant (``out: true`` or ``out: copy`` in
ops/*.yaml), driven by the operator test table: writing into out= gives the same values as
the call without it, returns the out= tensors themselves, and resizes them, as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau_testing.convert import to_flambeau
from flambeau_testing.optable import all_tests

_VARIANTS: dict[str, set] = {}
_OVERLOADS: dict[str, int] = {}
_WITH_OUT: dict[str, int] = {}
for _row in flambeau.ops_table():
    _VARIANTS.setdefault(_row["name"], set()).update(_row["variants"])
    _OVERLOADS[_row["name"]] = _OVERLOADS.get(_row["name"], 0) + 1
    _WITH_OUT[_row["name"]] = _WITH_OUT.get(_row["name"], 0) + ("out" in _row["variants"])


def _public_callables():
    spaces = [flambeau, flambeau.linalg, flambeau.special, flambeau.fft]
    try:
        import flambeau.nn.functional as nnf

        spaces.append(nnf)
    except ImportError:  # the nn package is not installed
        pass
    return {id(getattr(ns, n)) for ns in spaces for n in dir(ns) if not n.startswith("_")}


_PUBLIC = _public_callables()
# Rows that call the public function itself (not a lambda, an in-place method or a helper
# around it), so that out= reaches it.
ROWS = [
    t
    for t in all_tests()
    if "out" in _VARIANTS.get(t.name, ())
    and id(t.fn) in _PUBLIC
    and not t.fn.__name__.endswith("_")
]


def _empty_like_result(r):
    return flambeau.empty(0, dtype=r.dtype, device=r.device)


def _same(a, b):
    if a.dtype in (flambeau.bfloat16, flambeau.float16):
        a, b = a.float(), b.float()
    a, b = a.numpy(), b.numpy()
    if a.dtype.kind in "fc":
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        a, b = np.nan_to_num(a), np.nan_to_num(b)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("op", ROWS, ids=[t.id for t in ROWS])
def test_out_matches_the_result_and_is_returned(op):
    dtype = op.dtypes[0]
    ran = 0
    for sample in list(op.samples(dtype, np.random.default_rng(0)))[:3]:
        args = tuple(to_flambeau(a, dtype) for a in sample.args)
        flambeau.manual_seed(0)
        try:
            expected = op.fn(*args, **sample.kwargs)
        except Exception:  # a sample meant to raise (the table's error rows)
            continue
        if isinstance(expected, flambeau.Tensor):
            out = _empty_like_result(expected)
        elif isinstance(expected, tuple) and all(isinstance(e, flambeau.Tensor) for e in expected):
            out = tuple(_empty_like_result(e) for e in expected)
        else:
            continue  # a list or a number: no out= in PyTorch either
        flambeau.manual_seed(0)
        try:
            got = op.fn(*args, **sample.kwargs, out=out)
        except TypeError as e:
            # An overload PyTorch gives no out= either (prod(x), median(x)): the operator
            # has others, and the parser names the ones that take out=.
            assert _WITH_OUT[op.name] < _OVERLOADS[op.name], e
            assert "invalid combination of arguments" in str(e)
            continue
        if isinstance(out, tuple):
            assert isinstance(got, tuple) and len(got) == len(out)
            for g, o, e in zip(got, out, expected):
                assert g is o
                _same(o, e)
            assert type(got) is type(expected)  # the same named tuple
        else:
            assert got is out
            _same(out, expected)
        ran += 1
    if ran == 0:
        pytest.skip("no sample of this row returns tensors without raising")


def test_copied_out_checks_like_the_native_ones():
    A = flambeau.tensor([[4.0, 2.0], [2.0, 5.0]])
    with pytest.raises(TypeError, match="out= must be a tuple of 2 tensors"):
        flambeau.linalg.cholesky_ex(A, out=(flambeau.empty(0),))
    with pytest.raises(RuntimeError, match="expected out tensor 0 to have dtype float32"):
        f64, i32 = (
            flambeau.empty(0, dtype=flambeau.float64),
            flambeau.empty(0, dtype=flambeau.int32),
        )
        flambeau.linalg.cholesky_ex(A, out=(f64, i32))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        flambeau.linalg.det(A, out=flambeau.empty(0, dtype=flambeau.int64))
    x = A.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        flambeau.linalg.det(x, out=flambeau.empty(0))
    with flambeau.no_grad():
        out = flambeau.empty(0)
        assert flambeau.linalg.det(x, out=out) is out and not out.requires_grad
    # A single out= of another (castable) dtype gets the values cast, as in PyTorch.
    out = flambeau.empty(3, dtype=flambeau.float64)
    flambeau.softmax(flambeau.zeros(2), 0, out=out)
    assert out.shape == (2,) and out.dtype == flambeau.float64 and out.tolist() == [0.5, 0.5]


def test_out_with_stale_parser_slots_is_not_taken_for_an_alias():
    # max's overloads differ in length; the one chosen must not see what an earlier
    # overload's attempt left behind (out= itself), which read as out= aliasing an input.
    x, y = flambeau.tensor([1.0, 4.0]), flambeau.tensor([3.0, 2.0])
    for out in (flambeau.empty(0), flambeau.empty(5)):
        assert flambeau.max(x, y, out=out) is out and out.tolist() == [3.0, 4.0]
