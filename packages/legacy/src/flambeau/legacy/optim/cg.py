"""Non-linear conjugate gradient (Torch7's optim.cg: Rasmussen's `minimize`, Polak-Ribière
directions with a line search using quadratic/cubic interpolation and the Wolfe-Powell
conditions)."""

from __future__ import annotations

from ._common import evaluate, setup
from ._scalar import bad, div, sqrt


def cg(opfunc, x, config=None, state=None):
    """Minimise from x (updated in place); returns `(x, f_hist, evaluations)`.

    config: maxIter (20), maxEval (1.25·maxIter), rho (0.01), sig (0.5), int (0.1),
    ext (3.0), ratio (100).

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x, fs, evals = optim.cg(opfunc, flambeau.tensor([1.0, -2.0]), {"maxIter": 2})
    >>> x, [round(f, 4) for f in fs], evals
    (tensor([ 0.1429, -0.2857]), [5.0, 0.102], 4)
    """
    config, state = setup(config, state)
    rho = config.get("rho", 0.01)
    sig = config.get("sig", 0.5)
    intr = config.get("int", 0.1)
    ext = config.get("ext", 3.0)
    max_iter = config.get("maxIter", 20)
    ratio = config.get("ratio", 100)
    max_eval = config.get("maxEval", max_iter * 1.25)
    red = 1

    i = 0
    ls_failed = False
    fx = []

    f1, df1 = evaluate(opfunc, x)
    fx.append(f1)
    i += 1
    s = -df1
    d1 = -float(s.dot(s))  # slope
    z1 = red / (1 - d1)  # initial step

    while i < abs(max_eval):
        x0, f0, df0 = x.clone(), f1, df1.clone()
        x.add_(s, alpha=z1)
        f2, df2 = evaluate(opfunc, x)
        i += 1
        d2 = float(df2.dot(s))
        f3, d3, z3 = f1, d1, -z1  # point 3 starts equal to point 1
        m = min(max_iter, max_eval - i)
        success = False
        limit = -1

        while True:
            while (f2 > f1 + z1 * rho * d1 or d2 > -sig * d1) and m > 0:
                limit = z1
                if f2 > f1:  # quadratic fit
                    z2 = z3 - div(0.5 * d3 * z3 * z3, d3 * z3 + f2 - f3)
                else:  # cubic fit
                    a = div(6 * (f2 - f3), z3) + 3 * (d2 + d3)
                    b = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
                    z2 = div(sqrt(b * b - a * d2 * z3 * z3) - b, a)
                if bad(z2):
                    z2 = z3 / 2  # bisect when the fit fails
                z2 = max(min(z2, intr * z3), (1 - intr) * z3)
                z1 += z2
                x.add_(s, alpha=z2)
                f2, df2 = evaluate(opfunc, x)
                i += 1
                m -= 1
                d2 = float(df2.dot(s))
                z3 -= z2
            if f2 > f1 + z1 * rho * d1 or d2 > -sig * d1:
                break  # failure
            if d2 > sig * d1:
                success = True
                break
            if m == 0:
                break
            # cubic extrapolation
            a = div(6 * (f2 - f3), z3) + 3 * (d2 + d3)
            b = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
            z2 = div(-d2 * z3 * z3, b + sqrt(b * b - a * d2 * z3 * z3))
            if bad(z2) or z2 < 0:
                z2 = z1 * (ext - 1) if limit < -0.5 else (limit - z1) / 2
            elif limit > -0.5 and z2 + z1 > limit:
                z2 = (limit - z1) / 2
            elif limit < -0.5 and z2 + z1 > z1 * ext:
                z2 = z1 * (ext - 1)
            elif z2 < -z3 * intr:
                z2 = -z3 * intr
            elif limit > -0.5 and z2 < (limit - z1) * (1 - intr):
                z2 = (limit - z1) * (1 - intr)
            f3, d3, z3 = f2, d2, -z2
            z1 += z2
            x.add_(s, alpha=z2)
            f2, df2 = evaluate(opfunc, x)
            i += 1
            m -= 1
            d2 = float(df2.dot(s))

        if success:
            f1 = f2
            fx.append(f1)
            ss = (float(df2.dot(df2)) - float(df2.dot(df1))) / float(df1.dot(df1))
            s.mul_(ss).sub_(df2)  # Polak-Ribière direction
            df1, df2 = df2, df1
            d2 = float(df1.dot(s))
            if d2 > 0:  # not a descent direction: restart along -gradient
                s = -df1
                d2 = -float(s.dot(s))
            z1 = z1 * min(ratio, div(d1, d2 - 1e-320))
            d1 = d2
            ls_failed = False
        else:
            x.copy_(x0)
            f1, df1 = f0, df0
            # Two failures in a row, or out of evaluations (minimize.m's rule).
            if ls_failed or i > max_eval:
                break
            df1, df2 = df2, df1
            s = -df1
            d1 = -float(s.dot(s))
            z1 = 1 / (1 - d1)
            ls_failed = True
    return x, fx, i
