"""Deterministic-algorithms mode: the switches, the alert of marked operators,
and the filling of uninitialized memory."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import flambeau
import flambeau.utils.deterministic as det_utils
from flambeau import _C

MESSAGE = (
    "does not have a deterministic implementation, but you set "
    "'flambeau.use_deterministic_algorithms(True)'"
)


@pytest.fixture
def restore():
    """Restores the mode, warn_only, fill_uninitialized_memory and test marks."""
    state = (
        flambeau.are_deterministic_algorithms_enabled(),
        flambeau.is_deterministic_algorithms_warn_only_enabled(),
        det_utils.fill_uninitialized_memory,
    )
    marked = []

    def mark(op, device="cpu"):
        _C._set_nondeterministic(op, device, True)
        marked.append((op, device))

    yield mark
    for op, device in marked:
        _C._set_nondeterministic(op, device, False)
    flambeau.use_deterministic_algorithms(state[0], warn_only=state[1])
    det_utils.fill_uninitialized_memory = state[2]


def test_off_by_default_in_a_new_interpreter():
    code = (
        "import flambeau, flambeau.utils.deterministic as d; "
        "print(flambeau.are_deterministic_algorithms_enabled(), "
        "flambeau.is_deterministic_algorithms_warn_only_enabled(), "
        "flambeau.get_deterministic_debug_mode(), d.fill_uninitialized_memory)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "0", "True"]


def test_round_trips(restore):
    flambeau.use_deterministic_algorithms(True)
    assert flambeau.are_deterministic_algorithms_enabled()
    assert not flambeau.is_deterministic_algorithms_warn_only_enabled()
    flambeau.use_deterministic_algorithms(True, warn_only=True)
    assert flambeau.is_deterministic_algorithms_warn_only_enabled()
    flambeau.use_deterministic_algorithms(False)
    assert not flambeau.are_deterministic_algorithms_enabled()
    assert not flambeau.is_deterministic_algorithms_warn_only_enabled()
    det_utils.fill_uninitialized_memory = False
    assert det_utils.fill_uninitialized_memory is False
    assert flambeau.utils.deterministic.fill_uninitialized_memory is False
    det_utils.fill_uninitialized_memory = True
    assert det_utils.fill_uninitialized_memory is True


def test_argument_types(restore):
    with pytest.raises(TypeError, match="'mode'.*must be bool, not int"):
        flambeau.use_deterministic_algorithms(1)
    with pytest.raises(TypeError, match="'warn_only' must be bool, not int"):
        flambeau.use_deterministic_algorithms(True, warn_only=1)
    with pytest.raises(TypeError):
        flambeau.use_deterministic_algorithms(True, True)  # warn_only is keyword-only
    with pytest.raises(RuntimeError, match="expected a bool, but got int"):
        det_utils.fill_uninitialized_memory = 1
    assert not flambeau.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize(
    "mode,level,enabled,warn_only",
    [
        ("default", 0, False, False),
        ("warn", 1, True, True),
        ("error", 2, True, False),
        (0, 0, False, False),
        (1, 1, True, True),
        (2, 2, True, False),
    ],
)
def test_debug_mode_mapping(restore, mode, level, enabled, warn_only):
    flambeau.set_deterministic_debug_mode(mode)
    assert flambeau.get_deterministic_debug_mode() == level
    assert flambeau.are_deterministic_algorithms_enabled() is enabled
    assert flambeau.is_deterministic_algorithms_warn_only_enabled() is warn_only


def test_debug_mode_follows_use_deterministic_algorithms(restore):
    flambeau.use_deterministic_algorithms(True, warn_only=True)
    assert flambeau.get_deterministic_debug_mode() == 1
    flambeau.use_deterministic_algorithms(True)
    assert flambeau.get_deterministic_debug_mode() == 2
    flambeau.use_deterministic_algorithms(False, warn_only=True)
    assert flambeau.get_deterministic_debug_mode() == 0


def test_debug_mode_bad_values(restore):
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x"):
        flambeau.set_deterministic_debug_mode("x")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
        flambeau.set_deterministic_debug_mode(3)
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got -1"):
        flambeau.set_deterministic_debug_mode(-1)
    for bad in (1.0, None, [1]):
        with pytest.raises(TypeError, match="debug_mode must be str or int"):
            flambeau.set_deterministic_debug_mode(bad)
    assert flambeau.get_deterministic_debug_mode() == 0


def index_add_args():
    x = flambeau.zeros(3, 2)
    index = flambeau.tensor([0, 2, 0])
    source = flambeau.ones(3, 2)
    return x, index, source


def test_marked_operator_raises(restore):
    restore("index_add")
    x, index, source = index_add_args()
    flambeau.index_add(x, 0, index, source)  # mode off: runs
    flambeau.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match=r"^index_add_cpu " + re.escape(MESSAGE)):
        flambeau.index_add(x, 0, index, source)
    with pytest.raises(RuntimeError, match="index_add_cpu does not have"):
        x.index_add_(0, index, source)  # the in-place method
    with pytest.raises(RuntimeError, match="index_add_cpu does not have"):
        flambeau.index_add(x, 0, index, source, out=flambeau.empty(0))
    assert x.sum().item() == 0  # nothing ran
    flambeau.index_copy(x, 0, flambeau.tensor([1]), flambeau.ones(1, 2))  # unmarked: runs
    flambeau.use_deterministic_algorithms(False)
    flambeau.index_add(x, 0, index, source)


def test_marked_operator_warns_with_warn_only(restore):
    restore("index_add")
    flambeau.use_deterministic_algorithms(True, warn_only=True)
    x, index, source = index_add_args()
    with pytest.warns(UserWarning, match="index_add_cpu does not have a deterministic") as rec:
        out = flambeau.index_add(x, 0, index, source)
    assert "use_deterministic_algorithms(True, warn_only=True)" in str(rec[0].message)
    np.testing.assert_array_equal(out.numpy(), [[2, 2], [0, 0], [1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a filter that makes the warning an error
        with pytest.raises(UserWarning, match="index_add_cpu"):
            flambeau.index_add(x, 0, index, source)


def test_debug_mode_drives_the_alert(restore):
    restore("index_add")
    x, index, source = index_add_args()
    flambeau.set_deterministic_debug_mode("error")
    with pytest.raises(RuntimeError, match="index_add_cpu"):
        flambeau.index_add(x, 0, index, source)
    flambeau.set_deterministic_debug_mode("warn")
    with pytest.warns(UserWarning, match="index_add_cpu"):
        flambeau.index_add(x, 0, index, source)
    flambeau.set_deterministic_debug_mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flambeau.index_add(x, 0, index, source)


def test_condition_of_the_table_entry(restore):
    # index_put is nondeterministic only when it accumulates (nondeterministic_if).
    restore("index_put")
    flambeau.use_deterministic_algorithms(True)
    x = flambeau.zeros(4)
    indices = (flambeau.tensor([1, 1]),)
    values = flambeau.ones(2)
    flambeau.index_put(x, indices, values)
    x.index_put_(indices, values, accumulate=False)
    with pytest.raises(RuntimeError, match="index_put_cpu does not have"):
        flambeau.index_put(x, indices, values, accumulate=True)
    with pytest.raises(RuntimeError, match="index_put_cpu does not have"):
        x.index_put_(indices, values, True)


def test_python_operator_fast_path(restore):
    restore("add")
    flambeau.use_deterministic_algorithms(True)
    a = flambeau.ones(2)
    with pytest.raises(RuntimeError, match="add_cpu does not have"):
        a + a
    with pytest.raises(RuntimeError, match="add_cpu does not have"):
        a += 1
    (a * a).sum()  # unmarked operators run


def test_ops_table_rows_show_the_marks(restore):
    rows = {(r["name"], r["overload"]): r for r in flambeau.ops_table()}
    assert rows[("index_add", "")]["nondeterministic"] == ["cuda"]
    assert rows[("index_add", "")]["nondeterministic_if"] is None
    assert rows[("index_put", "")]["nondeterministic_if"] == "accumulate"
    assert rows[("scatter_reduce", "two")]["nondeterministic_if"] == "reduce=sum|prod|mean"
    assert all(r["nondeterministic"] in ([], ["cuda"]) for r in rows.values())
    restore("sum")
    sums = [r for r in flambeau.ops_table() if r["name"] == "sum"]
    assert sums and all(r["nondeterministic"] == ["cpu"] for r in sums)


def test_python_alert_helper(restore):
    _C._alert_not_deterministic("my_composite")  # mode off: nothing
    flambeau.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="^my_composite does not have a deterministic"):
        _C._alert_not_deterministic("my_composite")


def test_unknown_operator_cannot_be_marked():
    with pytest.raises(ValueError, match="no operator 'no_such_op'"):
        _C._set_nondeterministic("no_such_op", "cpu")


FILL = [
    ("float32", np.nan),
    ("float64", np.nan),
    ("float16", np.nan),
    ("bfloat16", np.nan),
    ("complex64", complex(np.nan, 0)),
    ("uint8", 255),
    ("int8", 127),
    ("int16", 32767),
    ("int32", 2**31 - 1),
    ("int64", 2**63 - 1),
    ("bool", True),
]


def values(t):
    if t.dtype == flambeau.bfloat16:
        t = t.float()
    return t.numpy()


def assert_filled(t, expected):
    v = values(t)
    if isinstance(expected, complex):
        assert np.isnan(v.real).all() and (v.imag == 0).all()
    elif isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(v).all()
    else:
        assert (v == expected).all(), v


@pytest.mark.parametrize("dtype,expected", FILL, ids=[d for d, _ in FILL])
def test_fill_uninitialized_memory(restore, dtype, expected):
    flambeau.use_deterministic_algorithms(True)
    dt = getattr(flambeau, dtype)
    assert_filled(flambeau.empty(2, 3, dtype=dt), expected)
    assert_filled(flambeau.empty((), dtype=dt), expected)
    assert_filled(flambeau.empty_like(flambeau.zeros(4, dtype=dt)), expected)
    strided = flambeau.empty_strided((2, 2), (1, 3), dtype=dt)
    assert_filled(strided, expected)
    assert_filled(flambeau.as_strided(strided, (5,), (1,)), expected)  # the gaps too


def test_out_resize_fills_new_memory(restore):
    flambeau.use_deterministic_algorithms(True)
    out = flambeau.zeros(1)
    flambeau.index_select(flambeau.arange(6.0).reshape(3, 2), 0, flambeau.tensor([2]), out=out)
    np.testing.assert_array_equal(out.numpy(), [[4.0, 5.0]])  # grown (filled), then written


def test_no_fill_when_disabled_or_mode_off(restore):
    # With the flag off (or the mode off) empty leaves memory as the allocator
    # gives it; only the absence of errors can be checked, plus that filling
    # resumes when both are on again.
    det_utils.fill_uninitialized_memory = False
    flambeau.use_deterministic_algorithms(True)
    flambeau.empty(3)
    det_utils.fill_uninitialized_memory = True
    assert np.isnan(flambeau.empty(3).numpy()).all()
    flambeau.use_deterministic_algorithms(False)
    flambeau.empty(3)
