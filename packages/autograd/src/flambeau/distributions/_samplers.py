"""Random variates the core has no sampler for: standard gamma (with its implicit
reparameterization gradient), beta and binomial. All draws come from flambeau's generator
(``flambeau.manual_seed`` or an explicit ``generator``) and are vectorized: rejection loops run
over the elements not yet accepted."""

from __future__ import annotations

import math

import flambeau as F
from flambeau.autograd import Function, no_grad

__all__ = ["standard_gamma", "sample_beta", "sample_binomial"]


def _marsaglia_tsang(alpha, generator=None):
    """Gamma(alpha, 1) draws for a flat float64 tensor ``alpha`` >= 1 (Marsaglia & Tsang 2000)."""
    d = alpha - 1.0 / 3.0
    c = 1.0 / (9.0 * d).sqrt()
    out = F.empty(alpha.shape, dtype=F.float64)
    todo = F.arange(alpha.numel())
    while todo.numel():
        dt, ct = d[todo], c[todo]
        z = F.randn((todo.numel(),), dtype=F.float64, generator=generator)
        u = F.rand((todo.numel(),), dtype=F.float64, generator=generator)
        v = (1.0 + ct * z) ** 3
        ok = (v > 0) & (F.log(u) < 0.5 * z * z + dt - dt * v + dt * F.log(v.clamp(min=1e-300)))
        out[todo[ok]] = (dt * v)[ok]
        todo = todo[~ok]
    return out


def _standard_gamma_float64(alpha, generator=None):
    """Gamma(alpha, 1) for any positive alpha; alpha < 1 uses the boost X = Y * U**(1/alpha).
    The rejection loop only sees finite positive alphas (NaN or infinity would never be
    accepted): a NaN alpha gives NaN, infinity infinity, and alpha <= 0 zero."""
    flat = alpha.reshape(-1).to(F.float64)
    usable = F.isfinite(flat) & (flat > 0)
    if not bool(usable.all()):
        x = _standard_gamma_float64(F.where(usable, flat, F.ones_like(flat)), generator)
        x = F.where(usable, x, F.where(flat > 0, flat, F.zeros_like(flat)))  # inf, or 0
        return F.where(F.isnan(flat), flat, x).reshape(alpha.shape)
    small = flat < 1
    boosted = F.where(small, flat + 1.0, flat)
    x = _marsaglia_tsang(boosted, generator)
    if bool(small.any()):
        u = F.rand(flat.shape, dtype=F.float64, generator=generator)
        # log-space so that tiny alphas underflow gracefully to the smallest normal number
        log_x = F.log(x) + F.log(u) / flat
        x = F.where(small, F.exp(log_x), x)
    return x.reshape(alpha.shape)


def _gamma_grad_float64(x, alpha):
    """d x / d alpha for x ~ Gamma(alpha, 1), by implicit differentiation of the CDF:
    dx/da = -(dP(a, x)/da) / p(x). Both are float64 tensors of one shape."""
    x = x.clamp(min=1e-300)
    large = alpha >= 1e4
    a = F.where(large, F.ones_like(alpha), alpha)
    xs = F.where(large, F.ones_like(x), x)
    # P(a, x) = sum_n t_n with t_0 = x^a e^-x / Gamma(a+1) and t_n = t_{n-1} x / (a+n);
    # dP/da = sum_n t_n (log x - digamma(a+n+1)) and t_0 / p(x) = x / a.
    log_x = F.log(xs)
    ratio = F.ones_like(a)
    psi = F.digamma(a + 1.0)
    total = F.zeros_like(a)
    n_terms = int(float((xs - a).clamp(min=0).max()) + 12 * math.sqrt(float(xs.max()) + 1) + 30)
    for n in range(n_terms):
        total = total + ratio * (log_x - psi)
        ratio = ratio * xs / (a + n + 1)
        psi = psi + 1.0 / (a + n + 1)
    series = -(xs / a) * total
    # Very large alpha: Wilson–Hilferty, x = a (1 - 1/(9a) + z / (3 sqrt(a)))^3 at fixed z.
    al = F.where(large, alpha, F.full_like(alpha, 1e4))
    xl = F.where(large, x, al)
    cube = (xl / al) ** (1.0 / 3.0)
    z = (cube - 1.0 + 1.0 / (9.0 * al)) * 3.0 * al.sqrt()
    dcube_da = 1.0 / (9.0 * al * al) - z / (6.0 * al**1.5)
    # x = a * cube^3 with cube = 1 - 1/(9a) + z/(3 sqrt a) => dx/da = cube^3 + 3 a cube^2 dcube/da
    asymptotic = cube**3 + 3.0 * al * cube * cube * dcube_da
    return F.where(large, asymptotic, series)


def _draw_standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) in alpha's dtype, at least its smallest normal number (which is
    also what a concentration <= 0 gets, as in PyTorch)."""
    with no_grad():
        alpha = alpha.detach()
        x = _standard_gamma_float64(alpha, generator).to(alpha.dtype)
        return x.clamp(min=F.finfo(alpha.dtype).tiny)  # NaN stays NaN


class _StandardGamma(Function):
    """Gamma(alpha, 1) samples, differentiable in alpha by implicit reparameterization."""

    @staticmethod
    def forward(ctx, alpha, generator):
        out = _draw_standard_gamma(alpha, generator)
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        alpha, out = ctx.saved_tensors
        return grad_output * standard_gamma_grad(alpha, out), None


def standard_gamma(alpha, generator=None):
    """Draws Gamma(alpha, 1) with alpha's shape and dtype; reparameterized in alpha."""
    if alpha.requires_grad:
        return _StandardGamma.apply(alpha, generator)
    return _draw_standard_gamma(alpha, generator)


def standard_gamma_grad(alpha, x):
    """d x / d alpha at the draws x ~ Gamma(alpha, 1), in alpha's dtype."""
    with no_grad():
        g = _gamma_grad_float64(x.detach().to(F.float64), alpha.detach().to(F.float64))
    return g.to(alpha.dtype)


def _require_floating(name, **tensors):
    for arg, t in tensors.items():
        if not isinstance(t, F.Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
        if not (t.dtype.is_floating_point):
            raise ValueError(
                f"{name} only supports floating-point dtypes for {arg}, got: {t.dtype}"
            )


# PyTorch's top-level samplers (flambeau.binomial, flambeau._standard_gamma, ...),
# reached through flambeau's module __getattr__.


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (torch.binomial): float tensors broadcast together,
    the result in their dtype; ``prob`` is clamped to [0, 1] and a count below 0 gives 0.

    >>> flambeau.binomial(flambeau.tensor([0.0, 7.0]), flambeau.tensor([0.5, 1.0]))
    tensor([0., 7.])
    """
    _require_floating("binomial", count=count, prob=prob)
    count, prob = F.broadcast_tensors(count.detach(), prob.detach())
    with no_grad():
        n, p = count.to(F.float64), prob.to(F.float64)
        usable = F.isfinite(n) & ~F.isnan(p)  # the others draw NaN (PyTorch's loops hang)
        n = F.where(usable, F.floor(n).clamp(min=0), F.zeros_like(n))
        draws = sample_binomial(n, F.where(usable, p.clamp(0.0, 1.0), F.zeros_like(p)), generator)
        draws = F.where(usable, draws, F.full_like(draws, math.nan))
        return draws.to(F.promote_types(count.dtype, prob.dtype))


def _standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) draws (torch._standard_gamma), differentiable in alpha."""
    _require_floating("_standard_gamma", self=alpha)
    return standard_gamma(alpha, generator)


def _standard_gamma_grad(alpha, output):
    """d output / d alpha for output ~ Gamma(alpha, 1) (torch._standard_gamma_grad)."""
    _require_floating("_standard_gamma_grad", self=alpha, output=output)
    return standard_gamma_grad(alpha, output)


def _sample_dirichlet(alpha, generator=None):
    """Dirichlet(alpha) draws along the last dim (torch._sample_dirichlet)."""
    _require_floating("_sample_dirichlet", self=alpha)
    with no_grad():
        gammas = _draw_standard_gamma(alpha, generator)
        return gammas / gammas.sum(-1, keepdim=True)


def sample_beta(a, b, generator=None):
    """Beta(a, b) draws as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) (float64 tensors)."""
    x = _standard_gamma_float64(a, generator)
    y = _standard_gamma_float64(b, generator)
    return x / (x + y)


def _binomial_small(n, p, generator=None):
    """Binomial by counting geometric waiting times; ``n`` small (each loop consumes >= 1 trial)."""
    count = F.zeros_like(p)
    used = F.zeros_like(p)
    active = (n > 0) & (p > 0)
    log_q = F.log1p(-p.clamp(max=1.0 - 1e-16))
    while bool(active.any()):
        u = F.rand(p.shape, dtype=F.float64, generator=generator)
        # trials up to and including the next success: Geometric(p) on {1, 2, ...}
        wait = F.floor(F.log(u) / log_q) + 1.0
        used = used + wait
        success = active & (used <= n)
        count = count + success.to(F.float64)
        active = success
    return F.where(p >= 1.0, n, count)


def sample_binomial(total_count, probs, generator=None):
    """Binomial(total_count, probs) draws (float64 tensors of one shape).

    Exact and O(log n): while the count is large, draw the median order statistic V of n
    uniforms, ~ Beta(i, n + 1 - i); the successes then split into those below and above V,
    each a binomial of about half the count (Devroye, Non-Uniform Random Variate Generation,
    X.4). Small counts finish with geometric waiting times on the rarer outcome.
    """
    n = total_count.to(F.float64).clone()
    p = probs.to(F.float64)
    flip = p > 0.5
    p = F.where(flip, 1.0 - p, p)
    base = F.zeros_like(p)
    big = n > 16
    while bool(big.any()):
        i = F.floor((n + 1.0) / 2.0)
        a = F.where(big, i, F.ones_like(i))
        b = F.where(big, n + 1.0 - i, F.ones_like(i))
        v = sample_beta(a, b, generator)
        below = p < v
        # below V: Bin(i - 1, p / V); above: i successes fixed, Bin(n - i, (p - V) / (1 - V))
        new_n = F.where(below, i - 1.0, n - i)
        new_p = F.where(below, p / v, (p - v) / (1.0 - v))
        base = F.where(big & ~below, base + i, base)
        n = F.where(big, new_n, n)
        p = F.where(big, new_p.clamp(0.0, 1.0), p)
        big = n > 16
    counts = base + _binomial_small(n, p, generator)
    return F.where(flip, total_count.to(F.float64) - counts, counts)
