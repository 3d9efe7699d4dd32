"""flambeau.linalg.ldl_factor(_ex) and ldl_solve: the raw factors against
scipy.linalg.ldl (the same LAPACK sytrf/hetrf), pivots in LAPACK's convention, and
PyTorch's errors (the table rows in optable/linalg_ldl.py check reconstructions)."""

import numpy as np
import pytest

import flambeau
from flambeau import linalg as LA
from flambeau_testing.optable.linalg_ldl import INDEFINITE, ldl_unpack

rng = np.random.default_rng(3)


def t(x):
    return flambeau.from_numpy(np.array(x))


def sym(n, complex_=False, hermitian=False):
    a = rng.standard_normal((n, n))
    if complex_:
        a = a + 1j * rng.standard_normal((n, n))
    return a + (a.conj().T if hermitian else a.T)


def _scipy_ldl(a, hermitian):
    import scipy.linalg  # after flambeau: see the note in optable/linalg.py

    return scipy.linalg.ldl(a, lower=True, hermitian=hermitian)


@pytest.mark.parametrize(
    "a,hermitian",
    [
        (INDEFINITE, False),
        (sym(5), False),
        (sym(4, complex_=True), False),
        (sym(4, complex_=True, hermitian=True), True),
    ],
    ids=["2x2-pivots", "real", "complex-symmetric", "hermitian"],
)
def test_factors_match_scipy_ldl(a, hermitian):
    LD, pivots = LA.ldl_factor(t(a), hermitian=hermitian)
    assert pivots.dtype == flambeau.int32
    M, D = ldl_unpack(LD.numpy(), pivots.numpy(), hermitian)
    lu, d, _ = _scipy_ldl(a, hermitian)
    np.testing.assert_allclose(D, d, atol=1e-12)
    np.testing.assert_allclose(M, lu, atol=1e-12)  # scipy's lu is our P L
    Mt = M.conj().T if hermitian else M.T
    np.testing.assert_allclose(M @ D @ Mt, a, atol=1e-12)


def test_two_by_two_blocks_have_equal_negative_pivots():
    LD, pivots = LA.ldl_factor(t(INDEFINITE))
    p = pivots.tolist()
    assert p[0] < 0 and p[0] == p[1] and p[2] > 0
    assert (LD.numpy() == np.tril(LD.numpy())).all()


def test_only_the_lower_triangle_is_read():
    a = sym(4)
    junk = a + np.triu(rng.standard_normal((4, 4)), 1)
    for x, y in zip(LA.ldl_factor(t(a)), LA.ldl_factor(t(junk))):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_batched_factor_and_solve_match_numpy():
    a = np.stack([sym(4), sym(4), INDEFINITE.repeat(2, 0).repeat(2, 1)[:4, :4] + np.eye(4)])
    b = rng.standard_normal((3, 4, 2))
    LD, pivots, info = LA.ldl_factor_ex(t(a))
    assert LD.shape == (3, 4, 4) and pivots.shape == (3, 4) and info.tolist() == [0, 0, 0]
    np.testing.assert_allclose(LA.ldl_solve(LD, pivots, t(b)).numpy(), np.linalg.solve(a, b))
    # pivots may be given as int64, as PyTorch accepts
    x = LA.ldl_solve(LD, pivots.long(), t(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b))


def test_hermitian_solve():
    a = sym(4, complex_=True, hermitian=True)
    b = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    LD, pivots = LA.ldl_factor(t(a), hermitian=True)
    x = LA.ldl_solve(LD, pivots, t(b), hermitian=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), atol=1e-12)


def test_singular_matrix_reports_info_or_raises_linalg_error():
    LD, pivots, info = LA.ldl_factor_ex(flambeau.zeros(3, 3))
    assert info.item() == 1 and pivots.tolist() == [1, 2, 3]
    with pytest.raises(LA.LinAlgError, match="torch.linalg.ldl_factor_ex: The input matrix is"):
        LA.ldl_factor_ex(flambeau.zeros(3, 3), check_errors=True)
    with pytest.raises(RuntimeError, match=r"ldl_factor: \(Batch element 1\): The input matrix"):
        LA.ldl_factor(t(np.stack([np.eye(2), np.zeros((2, 2))])))


def test_empty_inputs():
    LD, pivots = LA.ldl_factor(flambeau.zeros(2, 0, 0))
    assert LD.shape == (2, 0, 0) and pivots.shape == (2, 0)
    x = LA.ldl_solve(LD, pivots, flambeau.zeros(2, 0, 3))
    assert x.shape == (2, 0, 3)


def test_factor_errors():
    name = "torch.linalg.ldl_factor_ex: "
    with pytest.raises(RuntimeError, match=name + "A must be batches of square matrices"):
        LA.ldl_factor(flambeau.zeros(3, 4))
    with pytest.raises(RuntimeError, match=name + "The input tensor A must have at least 2"):
        LA.ldl_factor(flambeau.zeros(3))
    with pytest.raises(RuntimeError, match=name + "Expected a floating point or complex .*Long"):
        LA.ldl_factor(flambeau.zeros(3, 3, dtype=flambeau.int64))


def test_solve_errors():
    LD, pivots = LA.ldl_factor(t(INDEFINITE))
    b = flambeau.ones(3, 2, dtype=flambeau.float64)
    name = "torch.linalg.ldl_solve: "
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype, but found b"):
        LA.ldl_solve(LD, pivots, flambeau.ones(3, 2))
    with pytest.raises(RuntimeError, match="each A matrix is 3 by 3 but each b matrix is 4 by 2"):
        LA.ldl_solve(LD, pivots, flambeau.ones(4, 2, dtype=flambeau.float64))
    with pytest.raises(IndexError):
        LA.ldl_solve(LD, pivots, flambeau.ones(3, dtype=flambeau.float64))
    with pytest.raises(RuntimeError, match=name + "Expected pivots to be integers. Got Float"):
        LA.ldl_solve(LD, pivots.float(), b)
    with pytest.raises(RuntimeError, match=name + "Expected LD.shape\\[:-1\\] and pivots.shape"):
        LA.ldl_solve(LD, pivots[:2], b)
    with pytest.raises(RuntimeError, match=name + "A must be batches of square matrices"):
        LA.ldl_solve(LD[:, :2], pivots, b)


@pytest.mark.parametrize(
    "pivots,msg",
    [
        ([0, 1, 2], "must all satisfy \\|pivot\\| >= 1"),
        ([1, 2, 4], "must all satisfy \\|pivot\\| <= LD.size\\(-2\\)"),
        ([1, 2, -3], "must mark each 2x2 block"),  # a block cannot start at the last row
        ([-3, 2, 3], "must mark each 2x2 block"),  # nor be marked by one negative entry
        ([1, 2, 2**40], "must all satisfy \\|pivot\\| <= LD.size"),  # not wrapped by int32
    ],
)
def test_malformed_pivots_raise_instead_of_reaching_lapack(pivots, msg):
    LD = flambeau.eye(3, dtype=flambeau.float64)
    piv = flambeau.tensor(pivots, dtype=flambeau.int64)
    with pytest.raises(RuntimeError, match="Pivots given to ldl_solve " + msg):
        LA.ldl_solve(LD, piv, flambeau.ones(3, 1, dtype=flambeau.float64))


def test_out_arguments():
    a = t(INDEFINITE)
    outs = (flambeau.empty(0, dtype=flambeau.float64), flambeau.empty(0, dtype=flambeau.int32))
    r = LA.ldl_factor(a, out=outs)
    assert r[0] is outs[0] and r[1] is outs[1] and outs[1].shape == (3,)
    outs3 = outs + (flambeau.empty(0, dtype=flambeau.int32),)
    r = LA.ldl_factor_ex(a, out=outs3)
    assert r[2] is outs3[2] and outs3[2].item() == 0
    x = flambeau.empty(0, dtype=flambeau.float64)
    assert LA.ldl_solve(*LA.ldl_factor(a), flambeau.ones(3, 1, dtype=flambeau.float64), out=x) is x
    with pytest.raises(TypeError):
        LA.ldl_factor(a, out=outs3)
    with pytest.raises(RuntimeError, match="dtype"):
        LA.ldl_factor(a, out=(outs[0], flambeau.empty(0, dtype=flambeau.int64)))
