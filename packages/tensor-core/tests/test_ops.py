"""Runs every row of the operator table (shared/flambeau_testing/optable) against its NumPy
reference."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau_testing.convert import to_flambeau, to_numpy
from flambeau_testing.optable import NO_REFERENCE, Sample, all_tests

TESTS = all_tests()


def assert_close(actual, expected, dtype, op):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), op.id
        for a, e in zip(actual, expected):
            assert_close(a, e, dtype, op)
        return
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{op.id}: shape {actual.shape} != {expected.shape}"
    rtol, atol = op.tolerances(dtype)
    if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
        np.testing.assert_array_equal(actual, expected, err_msg=op.id)
    else:
        np.testing.assert_allclose(
            actual, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=op.id
        )


CASES = [pytest.param(op, dtype, id=f"{op.id}-{dtype}") for op in TESTS for dtype in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES)
def test_op_matches_reference(op, dtype):
    rng = np.random.default_rng(0)
    ran = 0
    for sample in op.samples(dtype, rng):
        sample: Sample
        args = tuple(to_flambeau(a, dtype) for a in sample.args)
        expected = op.ref(*sample.args, **sample.kwargs)
        actual = op.fn(*args, **sample.kwargs)
        assert_close(to_numpy(actual), expected, dtype, op)
        ran += 1
    assert ran > 0


def test_every_operator_has_a_table_row():
    tested = {op.name for op in TESTS} | set(NO_REFERENCE)
    missing = sorted({row["name"] for row in flambeau.ops_table()} - tested)
    assert not missing, f"operators without a row in flambeau_testing.optable: {missing}"


def test_every_public_operator_has_an_example():
    """Declared once, by the `example:` key of ops/*.yaml: the docs' operator page and
    the operator's docstring show it, and the docs' doctest build runs it."""
    rows = flambeau.ops_table()
    with_example = {row["name"] for row in rows if row["example"]}
    public = {row["name"] for row in rows if not row["name"].startswith("_")}
    missing = sorted(public - with_example)
    assert not missing, f"operators without an `example:` in ops/*.yaml: {missing}"
    assert all(row["example"].startswith(">>> ") for row in rows if row["example"])
