"""L-BFGS (Nocedal & Wright, Numerical Optimization, algorithms 7.4/7.5), with an optional
strong-Wolfe line search (algorithms 3.5/3.6)."""

from __future__ import annotations

import math

import flambeau
from flambeau.autograd import enable_grad

from .optimizer import Optimizer


def _dot(a, b) -> float:
    return (a * b).sum().item()


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds;
    the middle of the bounds when the cubic has no minimizer."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2
    d2 = math.sqrt(disc)
    if x1 > x2:  # write the formula for x1 <= x2
        x1, f1, g1, x2, f2, g2 = x2, f2, g2, x1, f1, g1
    x = x2 - (x2 - x1) * (g2 + d2 - d1) / (g2 - g1 + 2 * d2)
    return min(max(x, lo), hi)


def _strong_wolfe(obj, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions: bracketing, then zoom.
    obj(x, t, d) -> (loss, flat grad). Returns (loss, grad, t, evaluations)."""
    d_norm = d.abs().max().item()
    f_new, g_new = obj(x, t, d)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    it = 0
    # Bracketing: grow t until an interval certainly holds an acceptable step.
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g, br_gtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = (
                [t_prev, t],
                [f_prev, f_new],
                [g_prev, g_new],
                [gtd_prev, gtd_new],
            )
            break
        # Extrapolate with a cubic step kept within [t + 0.01 (t - t_prev), 10 t].
        t_next = _cubic_min(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10)
        )
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
    else:
        br, br_f, br_g, br_gtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]

    # Zoom: shrink the bracket [low, high] (low has the lower loss) around a Wolfe step.
    insufficient = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        # Keep away from the ends of the bracket, or it may shrink too slowly.
        top, bottom = max(br), min(br)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if insufficient or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = (
                    br[low],
                    br_f[low],
                    br_g[low],
                    br_gtd[low],
                )
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new, gtd_new
    if len(br) == 1:
        low = 0
    return br_f[low], br_g[low], br[low], evals


def _real(t):
    """A complex tensor as the pairs of reals it holds: the flat vector L-BFGS works on
    holds a complex parameter's real and imaginary parts (as PyTorch's does)."""
    return flambeau.view_as_real(t) if t.is_complex() else t


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters (one parameter group) as one flat vector.
    step() needs a closure that recomputes the loss and its gradients.

    >>> p = flambeau.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = flambeau.optim.LBFGS([p])
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((p - flambeau.tensor([3.0, 4.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure)  # the loss at the start
    tensor(40., grad_fn=<SumBackward0>)
    >>> p
    tensor([3., 4.], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
    ):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        parts = [
            _real(p).new_zeros(_real(p).numel())
            if p.grad is None
            else _real(p.grad.to_dense() if p.grad.is_sparse else p.grad).reshape(-1)
            for p in self._params
        ]
        return flambeau.cat(parts, 0)

    def _add_grad(self, t, d):
        """params += t * d (d flat, split back to the parameters' shapes)."""
        offset = 0
        params, views = [], []
        for p in self._params:
            p = _real(p)
            n = p.numel()
            params.append(p)
            views.append(d[offset : offset + n].view_as(p))
            offset += n
        flambeau._foreach_add_(params, views, alpha=t)

    def _evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        flambeau._foreach_copy_(self._params, x)
        return loss, g

    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS.step() requires a closure that reevaluates the model")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if g.abs().max().item() <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_g, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -g
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                # Update the curvature pairs, then the two-loop recursion for d = -H g.
                y = g - prev_g
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                al = [0.0] * len(old_dirs)
                q = -g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q = q - old_dirs[i] * al[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be = _dot(old_dirs[i], r) * ro[i]
                    r = r + old_stps[i] * (al[i] - be)
                d = r
            prev_g = g.clone()
            prev_loss = loss
            t = min(1.0, 1.0 / g.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(g, d)
            if gtd > -tol_change:  # not a descent direction
                break

            if line_search == "strong_wolfe":
                x0 = [p.detach().clone() for p in self._params]
                loss, g, t, ls_evals = _strong_wolfe(
                    lambda x, step, dd: self._evaluate(closure, x, step, dd), x0, t, d, loss, g, gtd
                )
                self._add_grad(t, d)
            else:
                self._add_grad(t, d)
                ls_evals = 0
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    ls_evals = 1
            opt_cond = g.abs().max().item() <= tol_grad
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if (d * t).abs().max().item() <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_g,
            prev_loss=prev_loss,
        )
        return orig_loss
