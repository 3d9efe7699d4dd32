"""Double backward through the gradients of narrow, select and diagonal, which write
the incoming gradient into a zero tensor (derivatives/helpers.py: scattered_into):
the second derivative must see that write."""

from __future__ import annotations

import pytest
from _grad_helpers import check, t64


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x.narrow(1, 1, 2),
        lambda x: x.select(0, 1),
        lambda x: x.diagonal(),
        lambda x: x.diag(1),
    ],
    ids=["narrow", "select", "diagonal", "diag"],
)
def test_second_derivative_of_a_function_of_a_view(view):
    check(lambda x: view(x * 1) ** 3, (t64((3, 4), 0),))
    check(lambda x: view(x).exp() / view(x * x + 1), (t64((3, 4), 1),))
