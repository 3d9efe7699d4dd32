"""cov, corrcoef, quantiles, histograms, distances, integration, gradient and isin
(flambeau._statistics) against NumPy/SciPy."""

import numpy as np
import pytest
import scipy.integrate
import scipy.spatial.distance

import flambeau as torch

rng = np.random.default_rng(1)


def t(a):
    return torch.tensor(np.asarray(a))


def test_cov_matches_numpy():
    x = rng.standard_normal((3, 7))
    fw = rng.integers(0, 4, 7)
    aw = rng.random(7)
    np.testing.assert_allclose(torch.cov(t(x)).numpy(), np.cov(x))
    np.testing.assert_allclose(torch.cov(t(x), correction=0).numpy(), np.cov(x, ddof=0))
    np.testing.assert_allclose(
        torch.cov(t(x), fweights=t(fw), aweights=t(aw)).numpy(),
        np.cov(x, fweights=fw, aweights=aw),
    )
    np.testing.assert_allclose(torch.cov(t(x), aweights=t(aw)).numpy(), np.cov(x, aweights=aw))
    np.testing.assert_allclose(
        torch.cov(t(x), correction=0, aweights=t(aw)).numpy(), np.cov(x, aweights=aw, ddof=0)
    )
    one = torch.cov(torch.tensor([1, 2, 4]))
    assert one.dim() == 0 and one.dtype == torch.float32
    np.testing.assert_allclose(one.item(), np.cov([1, 2, 4]), rtol=1e-6)
    xc = x[:2] + 1j * x[1:]
    np.testing.assert_allclose(torch.cov(t(xc)).numpy(), np.cov(xc))
    with pytest.raises(RuntimeError, match="two or fewer"):
        torch.cov(torch.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="integral"):
        torch.cov(t(x), fweights=t(aw))
    with pytest.raises(RuntimeError, match="negative"):
        torch.cov(t(x), aweights=t(-aw))


def test_corrcoef():
    x = rng.standard_normal((4, 9))
    np.testing.assert_allclose(torch.corrcoef(t(x)).numpy(), np.corrcoef(x))
    np.testing.assert_allclose(t(x).corrcoef().numpy(), np.corrcoef(x))
    assert torch.corrcoef(torch.tensor([1.0, 2.0, 4.0])).item() == pytest.approx(1.0)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(interpolation):
    x = rng.standard_normal((4, 6))
    qs = np.array([0.0, 0.1, 0.5, 0.77, 1.0])
    got = torch.quantile(t(x), t(qs), dim=1, interpolation=interpolation)
    np.testing.assert_allclose(got.numpy(), np.quantile(x, qs, axis=1, method=interpolation))
    got = torch.quantile(t(x), 0.3, interpolation=interpolation)
    np.testing.assert_allclose(got.numpy(), np.quantile(x, 0.3, method=interpolation))
    got = t(x).quantile(t(qs), dim=0, keepdim=True, interpolation=interpolation)
    want = np.quantile(x, qs, axis=0, keepdims=True, method=interpolation)
    np.testing.assert_allclose(got.numpy(), want)
    xn = x.copy()
    xn[1, 2] = xn[3, 0] = np.nan
    xn[2, :] = np.nan
    got = torch.nanquantile(t(xn), t(qs), dim=1, interpolation=interpolation)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.nanquantile(xn, qs, axis=1, method=interpolation)
    np.testing.assert_allclose(got.numpy(), want)
    got = torch.quantile(t(xn), 0.5, dim=1, interpolation=interpolation)
    np.testing.assert_allclose(got.numpy(), np.quantile(xn, 0.5, axis=1, method=interpolation))


def test_quantile_shapes_and_errors():
    x = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    assert torch.quantile(x, 0.5, dim=1, keepdim=True).shape == (2, 1)
    assert torch.quantile(x, torch.tensor([0.5, 0.2]), keepdim=True).shape == (2, 1, 1)
    assert torch.quantile(x, torch.tensor(0.5)).dim() == 0
    with pytest.raises(RuntimeError, match="float or double"):
        torch.quantile(torch.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="range"):
        torch.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.quantile(x, torch.tensor([0.5], dtype=torch.float64))
    with pytest.raises(RuntimeError, match="interpolation"):
        torch.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="non-empty"):
        torch.quantile(torch.zeros(0), 0.5)


def test_histogram_matches_numpy():
    x = rng.standard_normal(50)
    w = rng.random(50)
    for bins in (1, 5, 13):
        for density in (False, True):
            h, e = torch.histogram(t(x), bins, weight=t(w), density=density)
            nh, ne = np.histogram(x, bins, weights=w, density=density)
            np.testing.assert_allclose(e.numpy(), ne)
            np.testing.assert_allclose(h.numpy(), nh)
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    h, e = torch.histogram(t(x), t(edges))
    np.testing.assert_allclose(h.numpy(), np.histogram(x, edges)[0])
    h, e = torch.histogram(t(x), 4, range=(-1.0, 1.0))
    np.testing.assert_allclose(h.numpy(), np.histogram(x, 4, range=(-1, 1))[0])
    h, e = torch.histogram(torch.tensor([1.0, 1.0, 1.0]), 2)
    assert h.tolist() == [0.0, 3.0] and e.tolist() == [0.5, 1.0, 1.5]
    with pytest.raises(RuntimeError, match="floating point"):
        torch.histogram(torch.tensor([1, 2]), 2)
    assert t(x).histogram(3).hist.sum().item() == 50


def test_histogramdd_matches_numpy():
    pts = rng.standard_normal((40, 3))
    w = rng.random(40)
    for bins in ([2, 3, 4], 3):
        h, edges = torch.histogramdd(t(pts), bins, weight=t(w), density=True)
        nh, nedges = np.histogramdd(pts, bins, weights=w, density=True)
        np.testing.assert_allclose(h.numpy(), nh)
        for e, ne in zip(edges, nedges):
            np.testing.assert_allclose(e.numpy(), ne)
    h, _ = torch.histogramdd(t(pts[:, :2]), [2, 2], range=[-1.0, 1.0, 0.0, 1.0])
    nh, _ = np.histogramdd(pts[:, :2], [2, 2], range=[(-1, 1), (0, 1)])
    np.testing.assert_allclose(h.numpy(), nh)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.5, float("inf")])
def test_cdist_and_pdist_match_scipy(p):
    a, b = rng.standard_normal((30, 4)), rng.standard_normal((27, 4))
    metric = {0.0: "hamming", float("inf"): "chebyshev"}.get(p, "minkowski")
    kwargs = {"p": p} if metric == "minkowski" else {}
    want = scipy.spatial.distance.cdist(a, b, metric, **kwargs)
    if p == 0:
        want = want * a.shape[1]
    for mode in (
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    ):
        got = torch.cdist(t(a), t(b), p, compute_mode=mode)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    pd = scipy.spatial.distance.pdist(a, metric, **kwargs) * (a.shape[1] if p == 0 else 1)
    np.testing.assert_allclose(torch.pdist(t(a), p).numpy(), pd, rtol=1e-10)


def test_cdist_batches_and_errors():
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 4, 3))
    got = torch.cdist(t(a), t(b))
    want = np.stack([scipy.spatial.distance.cdist(a[i], b[0]) for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    with pytest.raises(RuntimeError, match="at least 2D"):
        torch.cdist(torch.zeros(3), torch.zeros(2, 3))
    with pytest.raises(RuntimeError, match="same number of columns"):
        torch.cdist(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.cdist(torch.zeros(2, 3), torch.zeros(2, 3), -1)
    with pytest.raises(RuntimeError, match="2D"):
        torch.pdist(torch.zeros(3))


def test_dist_and_renorm():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    for p in (1, 2, 3, float("inf")):
        np.testing.assert_allclose(
            torch.dist(t(a), t(b), p).item(), np.linalg.norm((a - b).ravel(), p)
        )
    x = rng.standard_normal((4, 3)) * 3
    for p, dim, maxnorm in ((1, 0, 2.0), (2, 1, 1.5), (3, 0, 100.0)):
        axes = tuple(d for d in range(2) if d != dim)
        norms = np.linalg.norm(x, p, axis=axes[0], keepdims=True)
        want = np.where(norms > maxnorm, x * maxnorm / (norms + 1e-7), x)
        np.testing.assert_allclose(torch.renorm(t(x), p, dim, maxnorm).numpy(), want)
    y = t(x)
    y.renorm_(2, 0, 1.0)
    assert (torch.linalg.vector_norm(y, 2, 1) <= 1.0 + 1e-6).all().item()


def test_trapezoid_matches_scipy():
    y = rng.standard_normal((3, 6))
    x = np.sort(rng.random(6))
    np.testing.assert_allclose(torch.trapezoid(t(y)).numpy(), scipy.integrate.trapezoid(y))
    np.testing.assert_allclose(
        torch.trapezoid(t(y), dx=0.5, dim=0).numpy(), scipy.integrate.trapezoid(y, dx=0.5, axis=0)
    )
    np.testing.assert_allclose(torch.trapezoid(t(y), t(x)).numpy(), scipy.integrate.trapezoid(y, x))
    np.testing.assert_allclose(torch.trapz(t(y), t(x)).numpy(), scipy.integrate.trapezoid(y, x))
    np.testing.assert_allclose(
        torch.cumulative_trapezoid(t(y), t(x)).numpy(), scipy.integrate.cumulative_trapezoid(y, x)
    )
    np.testing.assert_allclose(
        torch.cumulative_trapezoid(t(y), dx=2.0, dim=0).numpy(),
        scipy.integrate.cumulative_trapezoid(y, dx=2.0, axis=0),
    )
    assert torch.trapezoid(torch.tensor([1, 2, 3])).item() == 4.0


def test_gradient_matches_numpy():
    f = rng.standard_normal((5, 6))
    for edge_order in (1, 2):
        got = torch.gradient(t(f), edge_order=edge_order)
        for g, w in zip(got, np.gradient(f, edge_order=edge_order)):
            np.testing.assert_allclose(g.numpy(), w)
        got = torch.gradient(t(f), spacing=2.0, dim=1, edge_order=edge_order)
        np.testing.assert_allclose(
            got[0].numpy(), np.gradient(f, 2.0, axis=1, edge_order=edge_order)
        )
        xs = np.cumsum(rng.random(5)), np.cumsum(rng.random(6))
        got = torch.gradient(t(f), spacing=(t(xs[0]), t(xs[1])), edge_order=edge_order)
        for g, w in zip(got, np.gradient(f, *xs, edge_order=edge_order)):
            np.testing.assert_allclose(g.numpy(), w)
    with pytest.raises(RuntimeError, match="edge_order"):
        torch.gradient(torch.zeros(2), edge_order=2)


def test_isin():
    e = np.array([[1, 5, 3], [7, 2, 2]])
    s = np.array([2, 3, 9])
    np.testing.assert_array_equal(torch.isin(t(e), t(s)).numpy(), np.isin(e, s))
    np.testing.assert_array_equal(torch.isin(t(e), t(s), invert=True).numpy(), ~np.isin(e, s))
    assert torch.isin(torch.tensor([1, 2, 3]), 2).tolist() == [False, True, False]
    assert torch.isin(2, torch.tensor([1, 2])).item() is True
    assert not torch.isin(torch.tensor([1.0]), torch.tensor([], dtype=torch.float32)).any().item()
    assert not torch.isin(torch.tensor([float("nan")]), torch.tensor([float("nan")])).item()


def test_statistics_are_differentiable():
    autograd = pytest.importorskip("flambeau.autograd")
    x = torch.tensor(rng.standard_normal((3, 5))).requires_grad_()
    y = torch.tensor(rng.standard_normal((4, 5))).requires_grad_()
    for fn, args in (
        (lambda a: torch.cov(a), (x,)),
        (lambda a: torch.quantile(a, torch.tensor([0.25, 0.6], dtype=torch.float64), dim=1), (x,)),
        (lambda a, b: torch.cdist(a, b), (x, y)),
        (lambda a: torch.trapezoid(a), (x,)),
        (lambda a: torch.gradient(a)[1], (x,)),
    ):
        assert autograd.gradcheck(fn, args)
