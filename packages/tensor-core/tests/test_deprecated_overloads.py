"""PyTorch's deprecated call forms (its deprecated.yaml), declared in the operator table
under ``deprecated:``: ``x.add_(2, y)`` for ``x.add_(y, alpha=2)``, the addmm family's
leading beta. Each gives the same result as the current form and warns once."""

import warnings

import numpy as np
import pytest

import flambeau as F


def rng_tensors(*shapes):
    rng = np.random.default_rng(0)
    return [F.tensor(rng.standard_normal(s)) for s in shapes]


def deprecated(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return call()


x, y, z = rng_tensors((3,), (3,), (3,))
m, a, b = rng_tensors((2, 2), (2, 3), (3, 2))
b1, b2, bm = rng_tensors((4, 2, 3), (4, 3, 2), (4, 2, 2))
v2, v3 = rng_tensors((2,), (3,))

# (deprecated call, the same call in the current form)
CASES = [
    (lambda: F.add(x, 2, y), lambda: F.add(x, y, alpha=2)),
    (lambda: x.add(2, y), lambda: x.add(y, alpha=2)),
    (lambda: x.clone().add_(2, y), lambda: x.clone().add_(y, alpha=2)),
    (lambda: F.sub(x, 2, y), lambda: F.sub(x, y, alpha=2)),
    (lambda: x.clone().sub_(2, y), lambda: x.clone().sub_(y, alpha=2)),
    (lambda: F.addcmul(x, 0.5, y, z), lambda: F.addcmul(x, y, z, value=0.5)),
    (lambda: x.clone().addcmul_(0.5, y, z), lambda: x.clone().addcmul_(y, z, value=0.5)),
    (lambda: x.addcdiv(0.5, y, z), lambda: x.addcdiv(y, z, value=0.5)),
    (lambda: F.addmm(2, m, 3, a, b), lambda: F.addmm(m, a, b, beta=2, alpha=3)),
    (lambda: F.addmm(2, m, a, b), lambda: F.addmm(m, a, b, beta=2)),
    (lambda: m.addmm(2, 3, a, b), lambda: m.addmm(a, b, beta=2, alpha=3)),
    (lambda: m.clone().addmm_(2, a, b), lambda: m.clone().addmm_(a, b, beta=2)),
    (lambda: F.addmv(2, v2, 3, a, v3), lambda: F.addmv(v2, a, v3, beta=2, alpha=3)),
    (lambda: F.addr(2, m, v2, v2), lambda: F.addr(m, v2, v2, beta=2)),
    (lambda: F.baddbmm(2, bm, b1, b2), lambda: F.baddbmm(bm, b1, b2, beta=2)),
    (lambda: F.addbmm(2, m, 3, b1, b2), lambda: F.addbmm(m, b1, b2, beta=2, alpha=3)),
]


@pytest.mark.parametrize("old, new", CASES)
def test_a_deprecated_form_computes_the_current_one(old, new):
    np.testing.assert_allclose(deprecated(old).numpy(), new().numpy(), rtol=1e-12)


def test_out_takes_the_deprecated_form_too():
    out = F.empty(3, dtype=F.float64)
    deprecated(lambda: F.add(x, 2, y, out=out))
    np.testing.assert_allclose(out.numpy(), (x + 2 * y).numpy())


def test_a_deprecated_form_warns_once_naming_both_forms():
    t = F.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            t.sub(2.0, t)  # the first use of this form in the process
    messages = [str(w.message) for w in caught]
    assert messages == [
        "This overload of sub is deprecated:\n\tsub(Number alpha, Tensor other)\n"
        "Consider using one of the following signatures instead:\n"
        "\tsub(Tensor other, *, Number alpha=1)"
    ]
    assert caught[0].filename == __file__


def test_calls_that_fit_no_form_still_raise_type_error():
    with pytest.raises(TypeError, match="takes 1 positional arguments but 3 were given"):
        x.add(y, y, y)
