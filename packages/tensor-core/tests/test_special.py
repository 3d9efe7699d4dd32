"""flambeau.special: every torch.special name, the aliases, the special functions in
float64 at their edges (against SciPy, or values computed with mpmath at 50 digits),
their dtype rules and their errors. Rows over every dtype are in optable/special.py
and optable/pointwise_numeric.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau
import flambeau.special as special

# torch.special's public functions (PyTorch 2.13).
TORCH_SPECIAL = """
airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit
expm1 gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e
laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr log_softmax logit logsumexp
modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr
ndtri polygamma psi round scaled_modified_bessel_k0 scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w sinc softmax spherical_bessel_j0 xlog1py xlogy zeta
""".split()


def f64(values):
    return flambeau.tensor(values, dtype=flambeau.float64)


def scipy_special():
    return pytest.importorskip("scipy.special")


def test_special_has_every_torch_special_function():
    assert len(TORCH_SPECIAL) == 56
    assert [n for n in TORCH_SPECIAL if not callable(getattr(special, n, None))] == []
    assert sorted(special.__all__) == sorted(TORCH_SPECIAL)
    assert flambeau.special is special  # a lazy submodule, as torch.special


ALIASES = {
    "expit": "sigmoid",
    "gammaln": "lgamma",
    "psi": "digamma",
    "digamma": "digamma",
    "gammainc": "igamma",
    "gammaincc": "igammac",
    "multigammaln": "mvlgamma",
    "erf": "erf",
    "erfc": "erfc",
    "erfinv": "erfinv",
    "exp2": "exp2",
    "expm1": "expm1",
    "log1p": "log1p",
    "logit": "logit",
    "i0": "i0",
    "sinc": "sinc",
    "xlogy": "xlogy",
    "round": "round",
    "polygamma": "polygamma",
    "softmax": "softmax",
    "log_softmax": "log_softmax",
    "logsumexp": "logsumexp",
}


@pytest.mark.parametrize("name,target", sorted(ALIASES.items()))
def test_alias_is_the_top_level_function(name, target):
    assert getattr(special, name) is getattr(flambeau, target)


def test_aliases_behave_as_torch_special_documents():
    x = f64([[-1.5, 0.25, 2.0], [0.5, 3.0, -0.75]])
    a = x.numpy()
    np.testing.assert_allclose(special.expit(x).numpy(), 1 / (1 + np.exp(-a)))
    np.testing.assert_allclose(special.gammaln(x.abs()).numpy(), scipy_special().gammaln(abs(a)))
    np.testing.assert_allclose(special.psi(x).numpy(), scipy_special().psi(a))
    np.testing.assert_allclose(special.polygamma(2, x).numpy(), scipy_special().polygamma(2, a))
    sm = special.softmax(x, 1, dtype=flambeau.float32)
    assert sm.dtype == flambeau.float32
    np.testing.assert_allclose(sm.numpy(), np.exp(a) / np.exp(a).sum(1, keepdims=True), rtol=1e-6)
    lsm = special.log_softmax(x, dim=0)
    np.testing.assert_allclose(lsm.numpy(), a - np.log(np.exp(a).sum(0)))
    lse = special.logsumexp(x, 1, keepdim=True)
    np.testing.assert_allclose(lse.numpy(), np.log(np.exp(a).sum(1, keepdims=True)))
    np.testing.assert_allclose(special.round(x, decimals=1).numpy(), np.round(a, 1))
    np.testing.assert_allclose(special.logit(f64([0.25]), eps=0.3).numpy(), [math.log(0.3 / 0.7)])
    p = flambeau.tensor([2.5, 4.0], dtype=flambeau.float64)
    expected = [
        sum(math.lgamma(v - i / 2) for i in range(3)) + 1.5 * math.log(math.pi) for v in (2.5, 4.0)
    ]
    np.testing.assert_allclose(special.multigammaln(p, 3).numpy(), expected)
    np.testing.assert_allclose(special.gammainc(f64([2.0]), f64([1.0])).numpy(), [1 - 2 / math.e])


# Float64 values around every regime change and edge: signed zeros, tiny, the
# series/libstdc++/asymptotic boundaries (1e-8, 20), overflow of exp, inf and NaN.
EDGE_X = [-np.inf, -1e300, -750.0, -30.0, -20.0, -1.0, -1e-300, -0.0, 0.0, 5e-324,
          1e-300, 1e-8, 0.5, 1.0, 7.25, 19.99, 20.0, 20.01, 100.0, 709.0, 750.0, 1e300,
          np.inf, np.nan]  # fmt: skip


def _unary_cases():
    s = {
        "airy_ai": lambda x: scipy_special().airy(x)[0],
        "bessel_j0": "j0",
        "bessel_j1": "j1",
        "bessel_y0": "y0",
        "bessel_y1": "y1",
        "modified_bessel_i0": "i0",
        "modified_bessel_i1": "i1",
        "modified_bessel_k0": "k0",
        "modified_bessel_k1": "k1",
        "scaled_modified_bessel_k0": "k0e",
        "scaled_modified_bessel_k1": "k1e",
        "spherical_bessel_j0": lambda x: scipy_special().spherical_jn(0, x),
        "i0": "i0",
        "i0e": "i0e",
        "i1": "i1",
        "i1e": "i1e",
        "entr": "entr",
        "erfcx": "erfcx",
        "ndtr": "ndtr",
        "log_ndtr": "log_ndtr",
    }
    return [pytest.param(n, r, id=n) for n, r in s.items()]


@pytest.mark.parametrize("name,ref", _unary_cases())
def test_unary_float64_edges_match_scipy(name, ref):
    x = np.array(EDGE_X)
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"):
        # Far out the phase of x - pi/4 is lost in double (in SciPy too); only the
        # vanishing amplitude is meaningful there.
        x = x[np.abs(x) < 1e200]
    if name in ("modified_bessel_i0", "modified_bessel_i1", "i0", "i1"):
        x = x[(np.abs(x) < 709.5) | ~np.isfinite(x)]  # see test_i0_overflows_only_with_its_value
    if "bessel_k" in name:
        x = x[x != 5e-324]  # see test_k_at_a_subnormal_argument
    expected = ref(x) if callable(ref) else getattr(scipy_special(), ref)(x)
    actual = getattr(special, name)(f64(x)).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-300, equal_nan=True)


def test_k_at_a_subnormal_argument():
    # K0(x) ~ -log(x/2) - gamma and K1(x) ~ 1/x (SciPy gives inf and NaN there).
    x = f64([5e-324])
    k0 = -(math.log(5e-324) - math.log(2)) - 0.5772156649015329
    assert special.modified_bessel_k0(x).item() == pytest.approx(k0, rel=1e-14)
    assert special.scaled_modified_bessel_k0(x).item() == pytest.approx(k0, rel=1e-14)
    assert special.modified_bessel_k1(x).item() == math.inf


def test_i0_overflows_only_with_its_value():
    # I0(713) = 6.7e307 is finite though e^713 is not.
    s = scipy_special()
    x = np.array([709.0, 713.0, -713.5, 714.0])
    half = np.exp(np.abs(x) / 2)
    with np.errstate(over="ignore"):
        expected = s.i0e(x) * half * half
        expected_i1 = s.i1e(x) * half * half
    assert np.isfinite(expected[:3]).all() and np.isinf(expected[3])
    np.testing.assert_allclose(flambeau.i0(f64(x)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(special.i1(f64(x)).numpy(), expected_i1, rtol=1e-11)


def test_ndtri_keeps_relative_precision_in_both_tails_and_the_centre():
    s = scipy_special()
    p = np.array([5e-324, 1e-300, 1e-100, 1e-20, 0.02, 0.1, 0.5 - 1e-12, 0.5, 0.5 + 1e-10, 0.9])
    p = np.concatenate([p, 1 - np.array([1e-16, 1e-10, 1e-3])])
    np.testing.assert_allclose(special.ndtri(f64(p)).numpy(), s.ndtri(p), rtol=1e-13)
    edges = special.ndtri(f64([0.0, 1.0, -0.1, 1.1, np.nan])).numpy()
    np.testing.assert_array_equal(edges, [-np.inf, np.inf, np.nan, np.nan, np.nan])
    # ndtr undoes it.
    q = f64([1e-250, 1e-30, 0.3, 0.97])
    np.testing.assert_allclose(special.ndtr(special.ndtri(q)).numpy(), q.numpy(), rtol=1e-12)


# (a, x, upper, value) from mpmath.gammainc(..., regularized=True) at 50 digits. The
# first two are where SciPy's own error reaches 1e-5 and 1e-11 (Temme's expansion).
INCOMPLETE_GAMMA = [
    (2688501.444180263, 2675661.364864916, False, 2.1957902997566875e-15),
    (1441508.2899515734, 1424450.6582381376, False, 1.8497517856759986e-46),
    (1e6, 1e6 + 1000, True, 0.15865521363165971),
    (2e5, 2e5, False, 0.50029735402761854),
    (5e5, 5.02e5, True, 0.0023630282386838922),
    (5e4, 4.9e4, False, 3.3847542280794914e-6),
    (3.5, 2.0, False, 0.22022259152428408),
    (0.01, 3.0, True, 0.00013297135657015548),
    (150.0, 120.0, False, 0.004563441304151243),
]


@pytest.mark.parametrize("a,x,upper,value", INCOMPLETE_GAMMA)
def test_incomplete_gamma_against_mpmath(a, x, upper, value):
    fn = flambeau.igammac if upper else flambeau.igamma
    assert fn(f64([a]), f64([x])).item() == pytest.approx(value, rel=1e-12)
    other = flambeau.igamma if upper else flambeau.igammac
    assert other(f64([a]), f64([x])).item() == pytest.approx(1 - value, rel=1e-12, abs=1e-16)


def test_incomplete_gamma_edges_follow_pytorch():
    nan, inf = np.nan, np.inf
    a = f64([0.0, 0.0, 1.0, 1.0, inf, 1.0, -1.0, inf, nan])
    x = f64([0.0, 1.0, 0.0, inf, 1.0, -1.0, 1.0, inf, 1.0])
    p = flambeau.igamma(a, x).numpy()
    q = flambeau.igammac(a, x).numpy()
    np.testing.assert_array_equal(p, [nan, 1, 0, 1, 0, nan, nan, nan, nan])
    np.testing.assert_array_equal(q, [nan, 0, 1, 0, 1, nan, nan, nan, nan])


def test_zeta_edges_and_negative_q():
    s = scipy_special()
    nan, inf = np.nan, np.inf
    x = np.array([2.0, 1.0, 0.5, 2.0, 2.0, 2.0, 2.5, 3.0, inf, inf, inf, 1.5, 3.0, 4.0])
    q = np.array(
        [1.0, 1.0, 1.0, 0.0, -1.0, -1.5, -1.5, inf, 0.5, 1.0, 2.0, -inf, -1e6 - 0.5, -70.25]
    )
    actual = special.zeta(f64(x), f64(q)).numpy()
    expected = [math.pi**2 / 6, inf, nan, inf, inf, s.zeta(2, -1.5), nan, 0.0, inf, 1.0, nan, inf]
    np.testing.assert_allclose(actual[:12], expected, rtol=1e-13, equal_nan=True)
    # zeta(3, -M - 1/2) = zeta(3, M + 3/2) (mpmath at 40 digits): the negative terms cancel
    # the others in pairs, and SciPy loses the difference to cancellation.
    np.testing.assert_allclose(actual[12], 4.999990000013749985e-13, rtol=1e-10)
    np.testing.assert_allclose(actual[13], s.zeta(4, -70.25), rtol=1e-12)
    # Python numbers on either side.
    assert special.zeta(2, f64([1.0])).item() == pytest.approx(math.pi**2 / 6, rel=1e-14)
    assert special.zeta(f64([4.0]), 1).item() == pytest.approx(math.pi**4 / 90, rel=1e-14)


def test_xlogy_and_xlog1py_are_zero_where_x_is_zero_unless_y_is_nan():
    nan = np.nan
    x = f64([0.0, 0.0, 0.0, 2.0])
    y = f64([0.0, -3.0, nan, 0.0])
    np.testing.assert_array_equal(flambeau.xlogy(x, y).numpy(), [0.0, 0.0, nan, -np.inf])
    np.testing.assert_array_equal(special.xlog1py(x, y - 1).numpy(), [0.0, 0.0, nan, -np.inf])
    assert special.xlogy is flambeau.xlogy


def test_polynomial_degrees_are_truncated_and_negative_ones_give_zero():
    x = f64([0.3, 0.3, 0.3, 0.3])
    n = f64([-2.0, -0.5, 2.9, np.nan])
    t = special.chebyshev_polynomial_t(x, n).numpy()
    np.testing.assert_allclose(t[:3], [0.0, 1.0, 2 * 0.09 - 1])  # -0.5 truncates to 0
    assert np.isnan(t[3])
    # Integer tensors and Python numbers for either argument.
    assert special.hermite_polynomial_h(2.0, flambeau.tensor([3])).item() == pytest.approx(40.0)
    assert special.laguerre_polynomial_l(f64([1.0]), 2).item() == pytest.approx(-0.5)


def test_chebyshev_closed_forms_agree_with_the_recurrence_at_high_degree():
    s = scipy_special()
    x = np.array([-1.0, -0.999, -0.3, 0.0, 0.7, 1.0, 1.0001, -1.5, 3.0])
    for n in (64, 65, 200):
        np.testing.assert_allclose(
            special.chebyshev_polynomial_t(f64(x), n).numpy(),
            s.eval_chebyt(n, x),
            rtol=1e-9,
            atol=1e-12,  # cos(n t) near a zero: an absolute error of about n eps
        )
        np.testing.assert_allclose(
            special.chebyshev_polynomial_u(f64(x), n).numpy(),
            s.eval_chebyu(n, x),
            rtol=1e-9,
            atol=1e-12,
        )


def test_bounded_polynomials_of_absurd_degree_give_nan_instead_of_running_for_ever():
    big = f64([1e12, 2.0**30])
    assert np.isnan(special.legendre_polynomial_p(f64([0.5, -0.2]), big).numpy()).all()
    assert np.isnan(special.laguerre_polynomial_l(f64([0.5, 2.0]), big).numpy()).all()
    # Chebyshev polynomials have closed forms for any degree.
    t = special.chebyshev_polynomial_t(f64([0.5]), f64([3e9])).item()
    assert t == pytest.approx(math.cos(3e9 * math.acos(0.5)), abs=1e-6)


@pytest.mark.parametrize(
    "fn",
    [special.bessel_j0, special.i0e, special.erfcx, special.ndtr, special.airy_ai, flambeau.i0],
    ids=lambda f: f.__name__,
)
def test_unary_dtypes_follow_pytorch(fn):
    assert fn(flambeau.tensor([1, 2])).dtype == flambeau.float32
    assert fn(flambeau.tensor([True, False])).dtype == flambeau.float32
    for dt in (flambeau.float16, flambeau.bfloat16, flambeau.float32, flambeau.float64):
        assert fn(flambeau.ones(2, dtype=dt)).dtype == dt
    with pytest.raises(RuntimeError, match="not implemented for dtype complex64"):
        fn(flambeau.ones(2, dtype=flambeau.complex64))


def test_binary_dtypes_follow_pytorch():
    i, f, d = flambeau.tensor([2, 3]), flambeau.tensor([2.0, 3.0]), flambeau.tensor(2.0).double()
    assert special.zeta(i, i).dtype == flambeau.float32
    assert special.chebyshev_polynomial_t(f, i).dtype == flambeau.float32
    assert special.chebyshev_polynomial_t(f, f.double()).dtype == flambeau.float64
    assert special.xlog1py(i, f).dtype == flambeau.float32
    assert flambeau.xlogy(f, d).dtype == flambeau.float32  # a 0-dim tensor does not promote
    assert flambeau.igamma(f, i).dtype == flambeau.float32
    with pytest.raises(RuntimeError, match="igamma: not implemented for dtype int64"):
        flambeau.igamma(i, i)
    assert special.sinc(flambeau.ones(2, dtype=flambeau.complex64)).dtype == flambeau.complex64


def test_methods_and_inplace_variants_exist_as_in_pytorch():
    names = ("i0", "igamma", "igammac", "xlogy", "sinc", "gcd", "lcm", "heaviside",
             "nextafter", "ldexp", "float_power", "deg2rad", "rad2deg", "mvlgamma")  # fmt: skip
    for name in names:
        assert hasattr(flambeau, name) and hasattr(flambeau.Tensor, name), name
        assert hasattr(flambeau.Tensor, name + "_"), name
    for name in ("signbit", "frexp"):
        assert hasattr(flambeau, name) and hasattr(flambeau.Tensor, name), name
        assert not hasattr(flambeau.Tensor, name + "_"), name


def test_inplace_variants_write_into_self():
    x = f64([0.5, 1.5])
    y = x.clone()
    assert y.i0_() is y
    np.testing.assert_allclose(y.numpy(), scipy_special().i0(x.numpy()))
    z = f64([2.0, 3.0])
    z.mvlgamma_(2)
    np.testing.assert_allclose(z.numpy(), flambeau.mvlgamma(f64([2.0, 3.0]), 2).numpy())


def test_frexp_returns_mantissa_and_int32_exponent():
    x = f64([0.0, -0.0, 1.0, -3.5, 1e-310, 1e300, np.inf, np.nan])
    r = flambeau.frexp(x)
    assert r.mantissa.dtype == flambeau.float64 and r.exponent.dtype == flambeau.int32
    m, e = r
    np.testing.assert_array_equal(m.numpy(), np.frexp(x.numpy())[0])
    np.testing.assert_array_equal(e.numpy(), [0, 0, 1, 2, -1029, 997, 0, 0])
    np.testing.assert_array_equal(flambeau.ldexp(m, e).numpy(), x.numpy())
    assert (
        flambeau.frexp(flambeau.ones(2, dtype=flambeau.float16)).mantissa.dtype == flambeau.float16
    )
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        flambeau.frexp(flambeau.tensor([1, 2]))
    with pytest.raises(TypeError, match="tuple of 2 tensors"):
        flambeau.frexp(x, out=(flambeau.empty(0, dtype=flambeau.float64),))


def test_ldexp_does_not_overflow_in_2_to_the_e():
    assert flambeau.ldexp(f64([1e-300]), flambeau.tensor([1030])).item() == pytest.approx(
        1e-300 * 2.0**1000 * 2.0**30
    )
    assert flambeau.ldexp(flambeau.tensor([3]), flambeau.tensor([2])).dtype == flambeau.float32


def test_float_power_computes_in_double():
    f = flambeau.tensor([2.0, 3.0])
    assert flambeau.float_power(f, 2).dtype == flambeau.float64
    assert flambeau.float_power(flambeau.tensor([2]), 0.5).dtype == flambeau.float64
    assert flambeau.float_power(f, 1j).dtype == flambeau.complex128
    with pytest.raises(RuntimeError, match="has dtype float32 but the operation's result"):
        f.clone().float_power_(2)
    d = f.double()
    assert d.float_power_(2) is d and d.tolist() == [4.0, 9.0]
    with pytest.raises(RuntimeError, match="output given to float_power has dtype float32"):
        flambeau.float_power(f, 2, out=flambeau.empty(2))


def test_numeric_errors_follow_pytorch():
    f, i = flambeau.tensor([1.0]), flambeau.tensor([1])
    with pytest.raises(RuntimeError, match="different dtypes"):
        flambeau.heaviside(i, f)
    with pytest.raises(RuntimeError, match="complex tensors"):
        flambeau.heaviside(f.to(flambeau.complex64), f.to(flambeau.complex64))
    with pytest.raises(NotImplementedError, match="signbit is not implemented for complex"):
        flambeau.signbit(f.to(flambeau.complex64))
    with pytest.raises(RuntimeError, match="deg2rad is not supported for complex"):
        flambeau.deg2rad(f.to(flambeau.complex64))
    with pytest.raises(RuntimeError, match="gcd: not implemented for dtype float32"):
        flambeau.gcd(f, f)
    with pytest.raises(RuntimeError, match="nextafter: not implemented for dtype int64"):
        flambeau.nextafter(i, i)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        flambeau.mvlgamma(f, 0)
    with pytest.raises(RuntimeError, match="may not be a boolean tensor"):
        flambeau.mvlgamma(flambeau.tensor([True]), 1)
    with pytest.raises(RuntimeError, match="is too large"):
        f.mvlgamma_(2**31 - 1)
    with pytest.raises(RuntimeError, match="more than 2"):
        flambeau.mvlgamma(flambeau.ones(2**9), 2**20)
    assert flambeau.heaviside(f, 0.5).dtype == flambeau.float32  # a number takes input's dtype


def test_gcd_and_lcm_of_signs_and_zeros_and_wrapping():
    a = flambeau.tensor([-(2**63), 0, 12, -4, 0], dtype=flambeau.int64)
    b = flambeau.tensor([0, 0, -18, 6, 5], dtype=flambeau.int64)
    assert flambeau.gcd(a, b).tolist() == [-(2**63), 0, 6, 2, 5]  # |INT64_MIN| wraps, as PyTorch
    assert flambeau.lcm(a[2:], b[2:]).tolist() == [36, 12, 0]
    c = flambeau.tensor([-128, 100], dtype=flambeau.int8)
    d = flambeau.tensor([3, 3], dtype=flambeau.int8)
    assert flambeau.lcm(c, d).tolist() == [-128, 44]  # 384 and 300 wrapped into int8


def test_nextafter_steps_16_bit_types_in_their_own_grid():
    for dt, step in ((flambeau.float16, 2.0**-10), (flambeau.bfloat16, 2.0**-7)):
        one = flambeau.ones(1, dtype=dt)
        assert flambeau.nextafter(one, one * 2).item() == 1 + step
        assert flambeau.nextafter(one, one * 0).item() == 1 - step / 2
        zero = flambeau.zeros(1, dtype=dt)
        assert flambeau.nextafter(zero, -one).item() < 0
