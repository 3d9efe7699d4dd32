"""Line search satisfying the strong Wolfe conditions (Torch7's optim.lswolfe), with the
cubic interpolation of optim.polyinterp."""

from __future__ import annotations

import math

from ._common import evaluate
from ._scalar import div


def _cubic_value(c, t):
    return ((c[0] * t + c[1]) * t + c[2]) * t + c[3]


def polyinterp(points, xminBound=None, xmaxBound=None):
    """Minimiser of the cubic through two points (t, f, f'), as Torch7's polyinterp.

    Without bounds: the closed form, clamped to the two points. With bounds: the cubic's
    minimum over [xminBound, xmaxBound] among the bounds, the points and the real critical
    points (bisection when none is valid).

    >>> from flambeau.legacy import optim
    >>> points = [(0.0, 0.09, -0.6), (1.0, 0.49, 1.4)]  # (t, f, f') of f(t) = (t - 0.3)²
    >>> round(optim.polyinterp(points), 6)
    0.3
    """
    (x1, f1, g1), (x2, f2, g2) = points
    if xminBound is None and xmaxBound is None:
        lo, hi = ((x1, f1, g1), (x2, f2, g2)) if x1 <= x2 else ((x2, f2, g2), (x1, f1, g1))
        d1 = lo[2] + hi[2] - 3 * div(lo[1] - hi[1], lo[0] - hi[0])
        d2 = d1 * d1 - lo[2] * hi[2]
        if d2 >= 0:
            d2 = math.sqrt(d2)
            t = hi[0] - (hi[0] - lo[0]) * div(hi[2] + d2 - d1, hi[2] - lo[2] + 2 * d2)
            return min(max(t, lo[0]), hi[0])
        return (x1 + x2) / 2
    xmin, xmax = min(x1, x2), max(x1, x2)
    xminBound = xmin if xminBound is None else xminBound
    xmaxBound = xmax if xmaxBound is None else xmaxBound
    # Coefficients of a t³ + b t² + c t + d matching both values and slopes (4 x 4 solve).
    coef = _solve4(
        [[x1**3, x1**2, x1, 1.0], [x2**3, x2**2, x2, 1.0],
         [3 * x1**2, 2 * x1, 1.0, 0.0], [3 * x2**2, 2 * x2, 1.0, 0.0]],
        [f1, f2, g1, g2],
    )  # fmt: skip
    coef = [0.0 if abs(v) <= 1e-12 else v for v in coef]
    candidates = [xminBound, xmaxBound, x1, x2]
    dp = [3 * coef[0], 2 * coef[1], coef[2]]  # derivative: 3a t² + 2b t + c
    if not any(math.isnan(v) or math.isinf(v) for v in dp):
        candidates += _real_roots(dp)
    best, fbest = (xminBound + xmaxBound) / 2, math.inf
    for t in candidates:
        if xminBound <= t <= xmaxBound:
            ft = _cubic_value(coef, t)
            if ft < fbest:
                best, fbest = t, ft
    return best


def _real_roots(p):
    a, b, c = p
    if a == 0:
        return [] if b == 0 else [-c / b]
    disc = b * b - 4 * a * c
    if disc < 0:
        return []
    r = math.sqrt(disc)
    return [(-b - r) / (2 * a), (-b + r) / (2 * a)]


def _solve4(a, b):
    """Gaussian elimination with partial pivoting (nan when singular)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if m[piv][col] == 0:
            return [math.nan] * n
        m[col], m[piv] = m[piv], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for k in range(col, n + 1):
                m[r][k] -= f * m[col][k]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][k] * out[k] for k in range(r + 1, n))) / m[r][r]
    return out


def lswolfe(opfunc, x, t, d, f, g, gtd, options=None):
    """Strong-Wolfe line search from x along d with initial step t.

    options: c1 (1e-4), c2 (0.9), tolX (1e-9), maxIter (20).
    Returns `(f_new, g_new, x, t, evaluations)`; x is moved to x_init + t·d in place.

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x = flambeau.tensor([1.0, -2.0])
    >>> f, g = opfunc(x)
    >>> optim.lswolfe(opfunc, x, 0.25, -g, f, g, float(g.dot(-g)))  # along -g, first step 0.25
    (1.25, tensor([ 1., -2.]), tensor([ 0.5000, -1.0000]), 0.25, 1)
    """
    options = options or {}
    c1 = options.get("c1", 1e-4)
    c2 = options.get("c2", 0.9)
    tol_x = options.get("tolX", 1e-9)
    max_iter = options.get("maxIter", 20)

    x_init = x.clone()
    x.add_(d, alpha=t)
    f_new, g_new = evaluate(opfunc, x)
    evals = 1
    gtd_new = float(g_new.dot(d))

    # Bracketing phase: an interval holding a point that satisfies the conditions.
    ls_iter, t_prev, done = 0, 0.0, False
    f_prev, g_prev, gtd_prev = f, g.clone(), gtd
    bracket = None
    while ls_iter < max_iter:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev], [t, f_new, g_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new]]
            done = True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev], [t, f_new, g_new]]
            break
        tmp, t_prev = t_prev, t
        min_step = t + 0.01 * (t - tmp)
        max_step = t * 10
        t = polyinterp([(tmp, f_prev, gtd_prev), (t, f_new, gtd_new)], min_step, max_step)
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        x.copy_(x_init).add_(d, alpha=t)
        f_new, g_new = evaluate(opfunc, x)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
    if ls_iter == max_iter:
        bracket = [[0.0, f, g], [t, f_new, g_new]]

    # Zoom phase: shrink the bracket until a point satisfies the conditions.
    insuf_progress = False
    while not done and ls_iter < max_iter:
        lo = 0 if bracket[0][1] <= bracket[1][1] else 1
        hi = 1 - lo
        f_lo = bracket[lo][1]
        t = polyinterp([(b[0], b[1], float(b[2].dot(d))) for b in bracket])
        bmax = max(bracket[0][0], bracket[1][0])
        bmin = min(bracket[0][0], bracket[1][0])
        if div(min(bmax - t, t - bmin), bmax - bmin) < 0.1:
            if insuf_progress or t >= bmax or t <= bmin:
                if abs(t - bmax) < abs(t - bmin):
                    t = bmax - 0.1 * (bmax - bmin)
                else:
                    t = bmin + 0.1 * (bmax - bmin)
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        x.copy_(x_init).add_(d, alpha=t)
        f_new, g_new = evaluate(opfunc, x)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= f_lo:
            bracket[hi] = [t, f_new, g_new]
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[hi][0] - bracket[lo][0]) >= 0:
                bracket[hi] = list(bracket[lo])
            bracket[lo] = [t, f_new, g_new]
        if not done and abs((bracket[0][0] - bracket[1][0]) * gtd_new) < tol_x:
            break

    best = min(range(len(bracket)), key=lambda i: bracket[i][1])
    t, f_new, g_new = bracket[best]
    x.copy_(x_init).add_(d, alpha=t)
    return f_new, g_new, x, t, evals
