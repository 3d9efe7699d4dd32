"""Special functions the distributions need and the core lacks (computed with tensor ops)."""

from __future__ import annotations

import math

import flambeau as F
from flambeau.autograd import Function, no_grad

from .utils import broadcast_tensors


def xlogy(x, y):
    """x * log(y), defined as 0 where x == 0 (also for y == 0); differentiable."""
    if not isinstance(x, F.Tensor):
        x = F.tensor(float(x), dtype=y.dtype)
    # only 0 * log(0) needs a guard; at x == 0 < y the gradient in x is still log(y)
    both_zero = (x == 0) & (y == 0)
    safe_y = F.where(both_zero, F.ones_like(y), y)
    return x * F.log(safe_y)


def _gammainc_float64(a, x):
    """Regularized lower incomplete gamma P(a, x): series below a + 1, continued fraction above."""
    a, x = broadcast_tensors(a, x)
    x = x.clamp(min=0.0)
    use_series = x < a + 1.0
    log_prefix = a * F.log(x.clamp(min=1e-300)) - x - F.lgamma(a)
    # series: P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n))
    xs = F.where(use_series, x, F.zeros_like(x))
    term = 1.0 / a
    total = term
    for n in range(1, 2000):
        term = term * xs / (a + n)
        total = total + term
        if n % 50 == 0 and bool((term.abs() <= total.abs() * 1e-16).all()):
            break
    p_series = F.exp(log_prefix) * total
    # continued fraction for Q (modified Lentz), evaluated where x >= a + 1
    xc = F.where(use_series, a + 2.0, x)
    tiny = 1e-300
    b = xc + 1.0 - a
    c = F.full_like(b, 1.0 / tiny)
    d = 1.0 / b
    h = d
    for i in range(1, 2000):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = F.where(d.abs() < tiny, F.full_like(d, tiny), d)
        c = b + an / c
        c = F.where(c.abs() < tiny, F.full_like(c, tiny), c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if i % 20 == 0 and bool(((delta - 1.0).abs() < 1e-16).all()):
            break
    log_prefix_c = a * F.log(xc) - xc - F.lgamma(a)
    q_cf = F.exp(log_prefix_c) * h
    return F.where(use_series, p_series, 1.0 - q_cf).clamp(0.0, 1.0)


class _GammaInc(Function):
    """P(a, x); differentiable in x (d/dx = x^(a-1) e^-x / Gamma(a)), not in a (as in torch)."""

    @staticmethod
    def forward(ctx, a, x):
        with no_grad():
            out = _gammainc_float64(a.detach().to(F.float64), x.detach().to(F.float64))
        ctx.save_for_backward(a, x)
        return out.to(F.promote_types(a.dtype, x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        with no_grad():
            dens = F.exp(xlogy(a - 1, x) - x - F.lgamma(a))
            grad_x = grad_output * dens
            grad_x = _sum_to(grad_x, x.shape)
        return None, grad_x


def _sum_to(g, shape):
    while g.dim() > len(shape):
        g = g.sum(0)
    for i, size in enumerate(shape):
        if size == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdim=True)
    return g


def gammainc(a, x):
    return _GammaInc.apply(a, x)


# Modified Bessel functions I0, I1 for the von Mises distribution: the power series for
# small arguments, the asymptotic expansion for large ones (both differentiable).
_BESSEL_SWITCH = 25.0


def _log_bessel_series(x, order):
    x = x.clamp(max=_BESSEL_SWITCH)
    q = x * x / 4.0
    term = F.ones_like(x)
    total = F.ones_like(x)
    for k in range(1, 80):
        term = term * q / (k * (k + order))
        total = total + term
    # I_order(x) = (x/2)^order * sum_k q^k / (k! (k+order)!)
    if order == 0:
        return F.log(total)
    return order * F.log(x.clamp(min=1e-300) / 2.0) + F.log(total) - math.lgamma(order + 1)


def _log_bessel_asymptotic(x, order):
    x = x.clamp(min=_BESSEL_SWITCH)
    mu = 4.0 * order * order
    term = F.ones_like(x)
    total = F.ones_like(x)
    for k in range(1, 12):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total = total + term
    return x - 0.5 * F.log(2 * math.pi * x) + F.log(total)


def log_bessel_i(x, order: int):
    """log I_order(x) for x >= 0 and order 0 or 1."""
    small = x < _BESSEL_SWITCH
    return F.where(small, _log_bessel_series(x, order), _log_bessel_asymptotic(x, order))
