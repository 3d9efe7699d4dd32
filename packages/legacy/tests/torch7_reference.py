"""NumPy transcriptions of Lua Torch7's optim update rules (torch/optim: sgd.lua, asgd.lua,
adagrad.lua, adadelta.lua, adam.lua, adamax.lua, rmsprop.lua, rprop.lua, nag.lua, cg.lua,
lbfgs.lua), written statement by statement from the Lua sources, independent of the package.
"""

from __future__ import annotations

import math

import numpy as np


def rosenbrock(x):
    a, b = x
    f = (1 - a) ** 2 + 100 * (b - a * a) ** 2
    g = np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])
    return f, g


def sgd(x, cfg, st):
    lr = cfg.get("learningRate", 1e-3)
    lrd = cfg.get("learningRateDecay", 0)
    wd = cfg.get("weightDecay", 0)
    mom = cfg.get("momentum", 0)
    damp = cfg.get("dampening", mom)
    nesterov = cfg.get("nesterov", False)
    lrs, wds = cfg.get("learningRates"), cfg.get("weightDecays")
    n = st.setdefault("evalCounter", 0)
    fx, dfdx = rosenbrock(x)
    if wd != 0:
        dfdx = dfdx + wd * x
    elif wds is not None:
        dfdx = dfdx + wds * x
    if mom != 0:
        if "dfdx" not in st:
            st["dfdx"] = dfdx.copy()
        else:
            st["dfdx"] = st["dfdx"] * mom + (1 - damp) * dfdx
        dfdx = dfdx + mom * st["dfdx"] if nesterov else st["dfdx"]
    clr = lr / (1 + n * lrd)
    x = x - clr * (lrs * dfdx if lrs is not None else dfdx)
    st["evalCounter"] = n + 1
    return x


def asgd(x, cfg, st):
    eta0, lam = cfg.get("eta0", 1e-4), cfg.get("lambda", 1e-4)
    alpha, t0 = cfg.get("alpha", 0.75), cfg.get("t0", 1e6)
    st.setdefault("eta_t", eta0)
    st.setdefault("mu_t", 1)
    st.setdefault("t", 0)
    _, dfdx = rosenbrock(x)
    x = x * (1 - lam * st["eta_t"])
    x = x - st["eta_t"] * dfdx
    if "ax" not in st:
        st["ax"] = np.zeros_like(x)
    if st["mu_t"] != 1:
        st["ax"] = st["ax"] + (x - st["ax"]) * st["mu_t"]
    else:
        st["ax"] = x.copy()
    st["t"] += 1
    st["eta_t"] = eta0 / math.pow(1 + lam * eta0 * st["t"], alpha)
    st["mu_t"] = 1 / max(1, st["t"] - t0)
    return x


def adagrad(x, cfg, st):
    lr, lrd = cfg.get("learningRate", 1e-3), cfg.get("learningRateDecay", 0)
    wd = cfg.get("weightDecay", 0)
    n = st.setdefault("evalCounter", 0)
    _, dfdx = rosenbrock(x)
    if wd:
        dfdx = dfdx + wd * x
    clr = lr / (1 + n * lrd)
    st["var"] = st.get("var", np.zeros_like(x)) + dfdx * dfdx
    x = x - clr * dfdx / (np.sqrt(st["var"]) + 1e-10)
    st["evalCounter"] = n + 1
    return x


def adadelta(x, cfg, st):
    rho, eps = cfg.get("rho", 0.9), cfg.get("eps", 1e-6)
    lr, wd = cfg.get("learningRate", 1), cfg.get("weightDecay", 0)
    _, dfdx = rosenbrock(x)
    if wd:
        dfdx = dfdx + wd * x
    var = st.get("var", np.zeros_like(x)) * rho + (1 - rho) * dfdx * dfdx
    acc = st.get("acc", np.zeros_like(x))
    delta = np.sqrt(acc + eps) / np.sqrt(var + eps) * dfdx
    x = x - lr * delta
    st["var"], st["acc"] = var, acc * rho + (1 - rho) * delta * delta
    return x


def adam(x, cfg, st):
    lr, lrd = cfg.get("learningRate", 1e-3), cfg.get("learningRateDecay", 0)
    b1, b2 = cfg.get("beta1", 0.9), cfg.get("beta2", 0.999)
    eps, wd = cfg.get("epsilon", 1e-8), cfg.get("weightDecay", 0)
    _, g = rosenbrock(x)
    if wd:
        g = g + wd * x
    t = st.get("t", 0)
    clr = lr / (1 + t * lrd)
    t += 1
    m = st.get("m", np.zeros_like(x)) * b1 + (1 - b1) * g
    v = st.get("v", np.zeros_like(x)) * b2 + (1 - b2) * g * g
    denom = np.sqrt(v) + eps  # epsilon before the bias correction (Torch7)
    step = clr * math.sqrt(1 - b2**t) / (1 - b1**t)
    st.update(t=t, m=m, v=v)
    return x - step * m / denom


def adamax(x, cfg, st):
    lr = cfg.get("learningRate", 0.002)
    b1, b2 = cfg.get("beta1", 0.9), cfg.get("beta2", 0.999)
    eps, wd = cfg.get("epsilon", 1e-38), cfg.get("weightDecay", 0)
    _, g = rosenbrock(x)
    if wd:
        g = g + wd * x
    t = st.get("t", 0) + 1
    m = st.get("m", np.zeros_like(x)) * b1 + (1 - b1) * g
    u = np.maximum(st.get("u", np.zeros_like(x)) * b2, np.abs(g) + eps)
    st.update(t=t, m=m, u=u)
    return x - lr / (1 - b1**t) * m / u


def rmsprop(x, cfg, st):
    lr, alpha = cfg.get("learningRate", 1e-2), cfg.get("alpha", 0.99)
    eps, wd = cfg.get("epsilon", 1e-8), cfg.get("weightDecay", 0)
    _, g = rosenbrock(x)
    if wd:
        g = g + wd * x
    m = st.get("m", np.full_like(x, cfg.get("initialMean", 0))) * alpha + (1 - alpha) * g * g
    st["m"] = m
    return x - lr * g / (np.sqrt(m) + eps)


def rprop(x, cfg, st):
    step0 = cfg.get("stepsize", 0.1)
    etaplus, etaminus = cfg.get("etaplus", 1.2), cfg.get("etaminus", 0.5)
    smax, smin = cfg.get("stepsizemax", 50.0), cfg.get("stepsizemin", 1e-6)
    for _ in range(cfg.get("niter", 1)):
        _, g = rosenbrock(x)
        if "delta" not in st:
            st["delta"] = np.zeros_like(x)
            st["stepsize"] = np.full_like(x, step0)
        sign = np.sign(g * st["delta"])
        upd = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0))
        st["stepsize"] = np.clip(st["stepsize"] * upd, smin, smax)
        g = np.where(sign < 0, 0.0, g)
        x = x - np.sign(g) * st["stepsize"]
        st["delta"] = g.copy()
    return x


def nag(x, cfg, st):
    lr, lrd = cfg.get("learningRate", 1e-3), cfg.get("learningRateDecay", 0)
    wd, mom = cfg.get("weightDecay", 0), cfg.get("momentum", 0.9)
    lrs = cfg.get("learningRates")
    n = st.setdefault("evalCounter", 0)
    if "dfdx" in st:
        x = x + mom * st["dfdx"]
    _, g = rosenbrock(x)
    if wd:
        g = g + wd * x
    clr = lr / (1 + n * lrd)
    st["dfdx"] = np.zeros_like(x) if "dfdx" not in st else st["dfdx"] * mom
    step = lrs * g if lrs is not None else g
    x = x - clr * step
    st["dfdx"] = st["dfdx"] - clr * step
    st["evalCounter"] = n + 1
    return x


def cg(x, cfg, st):
    """optim.cg (Rasmussen's minimize.m), returning the final x. Scalars are float64 NumPy
    numbers so that, as in Lua, x/0 and sqrt(-1) give inf and nan."""
    with np.errstate(all="ignore"):
        return _cg(x, cfg)


def _cg(x, cfg):
    F = np.float64
    rho, sig = cfg.get("rho", 0.01), cfg.get("sig", 0.5)
    INT, EXT = cfg.get("int", 0.1), cfg.get("ext", 3.0)
    max_iter, ratio = cfg.get("maxIter", 20), cfg.get("ratio", 100)
    max_eval = cfg.get("maxEval", max_iter * 1.25)
    i, ls_failed = 0, 0
    f1, df1 = rosenbrock(x)
    i += 1
    s = -df1
    d1 = -float(s @ s)
    z1 = 1 / (1 - d1)
    while i < abs(max_eval):
        x0, f0, df0 = x.copy(), f1, df1.copy()
        x = x + z1 * s
        f2, df2 = rosenbrock(x)
        i += 1
        d2 = float(df2 @ s)
        f3, d3, z3 = f1, d1, -z1
        m = min(max_iter, max_eval - i)
        success, limit = 0, -1
        while True:
            while (f2 > f1 + z1 * rho * d1 or d2 > -sig * d1) and m > 0:
                limit = z1
                if f2 > f1:
                    z2 = z3 - F(0.5 * d3 * z3 * z3) / F(d3 * z3 + f2 - f3)
                else:
                    A = F(6 * (f2 - f3)) / F(z3) + 3 * (d2 + d3)
                    B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
                    z2 = (np.sqrt(F(B * B - A * d2 * z3 * z3)) - B) / F(A)
                if not math.isfinite(z2):
                    z2 = z3 / 2
                z2 = max(min(z2, INT * z3), (1 - INT) * z3)
                z1 = z1 + z2
                x = x + z2 * s
                f2, df2 = rosenbrock(x)
                i += 1
                m -= 1
                d2 = float(df2 @ s)
                z3 = z3 - z2
            if f2 > f1 + z1 * rho * d1 or d2 > -sig * d1:
                break
            elif d2 > sig * d1:
                success = 1
                break
            elif m == 0:
                break
            A = F(6 * (f2 - f3)) / F(z3) + 3 * (d2 + d3)
            B = 3 * (f3 - f2) - z3 * (d3 + 2 * d2)
            z2 = F(-d2 * z3 * z3) / (B + np.sqrt(F(B * B - A * d2 * z3 * z3)))
            if not math.isfinite(z2) or z2 < 0:
                z2 = z1 * (EXT - 1) if limit < -0.5 else (limit - z1) / 2
            elif limit > -0.5 and z2 + z1 > limit:
                z2 = (limit - z1) / 2
            elif limit < -0.5 and z2 + z1 > z1 * EXT:
                z2 = z1 * (EXT - 1)
            elif z2 < -z3 * INT:
                z2 = -z3 * INT
            elif limit > -0.5 and z2 < (limit - z1) * (1 - INT):
                z2 = (limit - z1) * (1 - INT)
            f3, d3, z3 = f2, d2, -z2
            z1 = z1 + z2
            x = x + z2 * s
            f2, df2 = rosenbrock(x)
            i += 1
            m -= 1
            d2 = float(df2 @ s)
        if success:
            f1 = f2
            ss = (float(df2 @ df2) - float(df2 @ df1)) / float(df1 @ df1)
            s = s * ss - df2
            df1, df2 = df2.copy(), df1.copy()
            d2 = float(df1 @ s)
            if d2 > 0:
                s = -df1
                d2 = -float(s @ s)
            z1 = z1 * min(ratio, F(d1) / F(d2 - 1e-320))
            d1 = d2
            ls_failed = 0
        else:
            x, f1, df1 = x0, f0, df0
            if ls_failed or i > max_eval:
                break
            df1, df2 = df2.copy(), df1.copy()
            s = -df1
            d1 = -float(s @ s)
            z1 = 1 / (1 - d1)
            ls_failed = 1
    return x


def lbfgs(x, cfg, st):
    """optim.lbfgs without a line search (fixed steps)."""
    max_iter = cfg.get("maxIter", 20)
    max_eval = cfg.get("maxEval", max_iter * 1.25)
    tol_fun, tol_x = cfg.get("tolFun", 1e-5), cfg.get("tolX", 1e-9)
    n_corr, lr = cfg.get("nCorrection", 100), cfg.get("learningRate", 1)
    st.setdefault("nIter", 0)
    f, g = rosenbrock(x)
    evals = 1
    if np.abs(g).sum() <= tol_fun:
        return x
    d, t = st.get("d"), st.get("t")
    dirs, stps, H = st.get("dirs"), st.get("stps"), st.get("H")
    g_old, f_old = st.get("g_old"), st.get("f_old")
    n = 0
    while n < max_iter:
        n += 1
        st["nIter"] += 1
        if st["nIter"] == 1:
            d, dirs, stps, H = -g, [], [], 1.0
        else:
            y, s = g - g_old, d * t
            ys = float(y @ s)
            if ys > 1e-10:
                if len(dirs) == n_corr:
                    dirs.pop(0)
                    stps.pop(0)
                dirs.append(s)
                stps.append(y)
                H = ys / float(y @ y)
            k = len(dirs)
            ro = [1 / float(stps[i] @ dirs[i]) for i in range(k)]
            al = [0.0] * k
            q = -g
            for i in reversed(range(k)):
                al[i] = float(dirs[i] @ q) * ro[i]
                q = q - al[i] * stps[i]
            d = q * H
            for i in range(k):
                be = float(stps[i] @ d) * ro[i]
                d = d + (al[i] - be) * dirs[i]
        g_old, f_old = g.copy(), f
        gtd = float(g @ d)
        if gtd > -tol_x:
            break
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if st["nIter"] == 1 else lr
        x = x + t * d
        ls = 0
        if n != max_iter:
            f, g = rosenbrock(x)
            ls = 1
        evals += ls
        if n == max_iter or evals >= max_eval or np.abs(g).sum() <= tol_fun:
            break
        if np.abs(d * t).sum() <= tol_x or abs(f - f_old) < tol_x:
            break
    st.update(d=d, t=t, dirs=dirs, stps=stps, H=H, g_old=g_old, f_old=f_old)
    return x
