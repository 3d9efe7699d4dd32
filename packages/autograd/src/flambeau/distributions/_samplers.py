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
    """Gamma(alpha, 1) for any positive alpha; alpha < 1 uses the boost X = Y * U**(1/alpha)."""
    flat = alpha.reshape(-1).to(F.float64)
    small = flat < 1
    boosted = F.where(small, flat + 1.0, flat)
    x = _marsaglia_tsang(boosted, generator)
    if bool(small.any()):
        u = F.rand(flat.shape, dtype=F.float64, generator=generator)
        # log-space so that tiny alphas underflow gracefully to the smallest normal number
        log_x = F.log(x) + F.log(u) / flat
        x = F.where(small, F.exp(log_x), x)
    return x.reshape(alpha.shape)


def _standard_gamma_grad(x, alpha):
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


class _StandardGamma(Function):
    """Gamma(alpha, 1) samples, differentiable in alpha by implicit reparameterization."""

    @staticmethod
    def forward(ctx, alpha):
        with no_grad():
            x = _standard_gamma_float64(alpha.detach())
            tiny = F.finfo(alpha.dtype).tiny
            out = x.to(alpha.dtype).clamp(min=tiny)
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        alpha, out = ctx.saved_tensors
        with no_grad():
            g = _standard_gamma_grad(out.to(F.float64), alpha.detach().to(F.float64))
        return grad_output * g.to(alpha.dtype)


def standard_gamma(alpha, generator=None):
    """Draws Gamma(alpha, 1) with alpha's shape and dtype; reparameterized in alpha."""
    if generator is None and alpha.requires_grad:
        return _StandardGamma.apply(alpha)
    with no_grad():
        x = _standard_gamma_float64(alpha.detach(), generator)
        return x.to(alpha.dtype).clamp(min=F.finfo(alpha.dtype).tiny)


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
