"""flambeau.testing: PyTorch's testing helpers (assert_close, make_tensor)."""

from __future__ import annotations

import warnings

import flambeau as F

from ._comparison import assert_close, default_tolerances
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# assert_allclose's own, looser defaults (it predates assert_close).
_ALLCLOSE_PRECISIONS = {F.float16: (1e-3, 1e-3), F.float32: (1e-4, 1e-5), F.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """Deprecated (FutureWarning): use :func:`assert_close`.

    Non-tensor inputs become tensors (``expected`` in ``actual``'s dtype); dtypes may
    differ, NaNs are equal by default, and the default tolerances are float16 (1e-3, 1e-3),
    float32 (1e-4, 1e-5), float64 (1e-5, 1e-8) and (0, 0) otherwise.

    >>> from flambeau.testing import assert_allclose
    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> assert_allclose(x, [1.0, 2.0, 3.00001])  # close: nothing happens (but a FutureWarning)
    >>> assert_allclose(x, [1.0, 2.0, 3.1])
    Traceback (most recent call last):
      ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.0999999... at index (2,) (up to 1e-05 allowed)
    Greatest relative difference: 0.0322580... at index (2,) (up to 0.0001 allowed)
    """
    warnings.warn(
        "`flambeau.testing.assert_allclose()` is deprecated since 1.12 and will be removed in "
        "a future release. Please use `flambeau.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, F.Tensor):
        actual = F.tensor(actual)
    if not isinstance(expected, F.Tensor):
        expected = F.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions=_ALLCLOSE_PRECISIONS)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
