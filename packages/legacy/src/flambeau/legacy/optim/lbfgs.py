"""Limited-memory BFGS (Torch7's optim.lbfgs)."""

from __future__ import annotations

from ._common import evaluate, setup


def lbfgs(opfunc, x, config=None, state=None):
    """Run up to maxIter L-BFGS iterations from x (updated in place); returns
    `(x, f_hist, evaluations)`, f_hist[0] before optimising and f_hist[-1] after.

    config: maxIter (20), maxEval (1.25·maxIter), tolFun (1e-5: stop when Σ|g| ≤ tolFun),
    tolX (1e-9: stop on tiny steps or changes of f), nCorrection (100: history length),
    learningRate (1), lineSearch (e.g. optim.lswolfe; without one, fixed steps),
    lineSearchOptions. The first step is min(1, 1/Σ|g|)·learningRate. The history persists
    in state between calls.

    >>> from flambeau.legacy import optim
    >>> def opfunc(x):  # f(x) = sum(x²), df/dx = 2x
    ...     return float((x * x).sum()), 2 * x
    >>> x, fs, evals = optim.lbfgs(opfunc, flambeau.tensor([1.0, -2.0]))
    >>> [round(f, 4) for f in fs], evals
    ([5.0, 2.2222, 0.0], 3)
    >>> x.abs().max() < 1e-6
    tensor(True)
    """
    config, state = setup(config, state)
    max_iter = config.get("maxIter", 20)
    max_eval = config.get("maxEval", max_iter * 1.25)
    tol_fun = config.get("tolFun", 1e-5)
    tol_x = config.get("tolX", 1e-9)
    n_correction = config.get("nCorrection", 100)
    line_search = config.get("lineSearch")
    ls_options = config.get("lineSearchOptions")
    lr = config.get("learningRate", 1)

    state.setdefault("funcEval", 0)
    state.setdefault("nIter", 0)

    f, g = evaluate(opfunc, x)
    f_hist = [f]
    current_evals = 1
    state["funcEval"] += 1
    if float(g.abs().sum()) <= tol_fun:
        return x, f_hist, current_evals

    d, t = state.get("d"), state.get("t")
    old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
    h_diag = state.get("Hdiag")
    g_old, f_old = state.get("g_old"), state.get("f_old")

    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        state["nIter"] += 1

        # Descent direction: -g first, then the two-loop recursion.
        if state["nIter"] == 1:
            d = -g
            old_dirs, old_stps, h_diag = [], [], 1.0
        else:
            y = g - g_old
            s = d * t
            ys = float(y.dot(s))
            if ys > 1e-10:
                if len(old_dirs) == n_correction:
                    old_dirs.pop(0)
                    old_stps.pop(0)
                old_dirs.append(s)
                old_stps.append(y)
                h_diag = ys / float(y.dot(y))
            k = len(old_dirs)
            ro = [1 / float(old_stps[i].dot(old_dirs[i])) for i in range(k)]
            al = [0.0] * k
            q = -g
            for i in range(k - 1, -1, -1):
                al[i] = float(old_dirs[i].dot(q)) * ro[i]
                q.add_(old_stps[i], alpha=-al[i])
            d = q * h_diag
            for i in range(k):
                be_i = float(old_stps[i].dot(d)) * ro[i]
                d.add_(old_dirs[i], alpha=al[i] - be_i)
        g_old = g.clone()
        f_old = f

        gtd = float(g.dot(d))
        if gtd > -tol_x:
            break  # no progress possible along d

        if state["nIter"] == 1:
            t = min(1.0, 1.0 / float(g.abs().sum())) * lr
        else:
            t = lr

        ls_evals = 0
        if line_search is not None:
            f, g, x, t, ls_evals = line_search(opfunc, x, t, d, f, g, gtd, ls_options)
            f_hist.append(f)
        else:
            x.add_(d, alpha=t)
            if n_iter != max_iter:
                # In a stochastic setting the last evaluation would be wasted.
                f, g = evaluate(opfunc, x)
                ls_evals = 1
                f_hist.append(f)
        current_evals += ls_evals
        state["funcEval"] += ls_evals

        if n_iter == max_iter:
            break
        if current_evals >= max_eval:
            break
        if float(g.abs().sum()) <= tol_fun:
            break
        if float((d * t).abs().sum()) <= tol_x:
            break
        if abs(f - f_old) < tol_x:
            break

    state.update(
        d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, Hdiag=h_diag, g_old=g_old, f_old=f_old
    )
    return x, f_hist, current_evals
