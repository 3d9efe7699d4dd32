"""Rows for the core's autograd support operators: values pass through unchanged."""

import flambeau

from . import ALL_REAL, FLOATS, OpTest, unary_samples


def _detach_(t):
    return t.clone().detach_()


TESTS = [
    OpTest("detach", flambeau.detach, lambda a: a, unary_samples, dtypes=ALL_REAL + ("bool",)),
    OpTest("detach_", _detach_, lambda a: a, unary_samples, dtypes=FLOATS),
    OpTest(
        "requires_grad_",
        lambda t: t.clone().requires_grad_(False),
        lambda a: a,
        unary_samples,
        dtypes=FLOATS,
    ),
]
