"""Formulas of the CTC loss (ops/nn_ctc.yaml).

_ctc_loss's gradient is the core's _ctc_loss_backward kernel. That kernel runs the beta
recursion inside; its own formula restates what it computes with differentiable
operators (the recursion over time with logsumexp, vectorised over the batch) and
differentiates that, so CTC has gradients of any order. The forward's log_alpha output
gets its gradient the same way, from the alpha recursion (it flows there in double
backward, since the backward kernel reads log_alpha).
"""

from __future__ import annotations

import flambeau as F

from .nn import _first, _vjp
from .registry import composite, formula

# Stands for log(0) inside the recursions: finite, so gradients never meet inf - inf or
# 0 * inf, while exp of it (and of anything near it) is exactly 0.
_NEG = -1e30


def _lengths(v):
    if isinstance(v, F.Tensor):
        return [int(x) for x in v.reshape(-1).tolist()]
    return [int(x) for x in v]


class _Layout:
    """The extended label sequences of a batch (blanks around and between each sample's
    labels, padded with blanks to L = 2 max(target_lengths) + 1 states), where each state
    is entered from, and masks (valid states, live frames)."""

    def __init__(self, a, T, N, device):
        il, tl = _lengths(a["input_lengths"]), _lengths(a["target_lengths"])
        blank, targets = a["blank"], a["targets"]
        self.il, self.T, self.N = il, T, N
        self.L = L = 2 * max(tl, default=0) + 1
        flat = targets.reshape(-1).tolist()
        width = targets.shape[1] if targets.dim() == 2 else 0
        ext, pos = [], 0
        into, out_of = [], []  # (N, 3 L) state indices; L is a log(0) column
        for b in range(N):
            start = b * width if targets.dim() == 2 else pos
            pos += tl[b]
            e = [blank] * L
            e[1 : 2 * tl[b] : 2] = flat[start : start + tl[b]]
            ext.append(e)
            n = 2 * tl[b] + 1
            # Entering s from s - 2 skips a blank between two different labels.
            into.append(
                [
                    i
                    for s in range(L)
                    for i in (
                        s,
                        s - 1 if s > 0 else L,
                        s - 2 if 1 < s < n and e[s] != e[s - 2] else L,
                    )
                ]
            )
            out_of.append(
                [
                    i
                    for s in range(L)
                    for i in (
                        s,
                        s + 1 if s + 1 < n else L,
                        s + 2 if s + 2 < n and e[s + 2] != e[s] else L,
                    )
                ]
            )
        on = dict(dtype=F.int64, device=device)  # the layout lives where log_probs does
        self.ext = F.tensor(ext, **on)
        self.into, self.out_of = F.tensor(into, **on), F.tensor(out_of, **on)
        states = F.arange(L, device=device).reshape(1, L)
        n = F.tensor([2 * t + 1 for t in tl], **on).reshape(N, 1)
        self.valid = states < n  # (N, L)
        self.first = states < n.clamp_max(2)  # where alpha starts
        self.last = (states >= n - 2) & self.valid  # where beta starts
        self.frames = F.arange(T, device=device).reshape(T, 1, 1)
        self.lengths = F.tensor(il, **on).reshape(1, N, 1)
        self.live = self.frames < self.lengths  # (T, N, 1)

    def at_labels(self, lp):
        """log_probs at the extended labels: (T, N, C) -> (T, N, L)."""
        T, N = lp.shape[0], lp.shape[1]
        return lp.gather(2, self.ext.unsqueeze(0).expand(T, N, self.L))


def _step(prev, index, L):
    """logsumexp over the states each state is entered from (or left to)."""
    N = prev.shape[0]
    padded = F.pad(prev, [0, 1], value=_NEG)
    return F.logsumexp(padded.gather(1, index).reshape(N, L, 3), 2)


def _alpha(lpe, lay, neg):
    """log alpha (N, T, L) from log_probs at the labels (T, N, L); -inf where unreachable."""
    T, L = lpe.shape[0], lay.L
    frames = max(lay.il, default=0)
    keep = (lay.live & lay.valid.unsqueeze(0)).unbind(0)
    lps = lpe.unbind(0)
    steps, prev = [], None
    for t in range(frames):
        cur = F.where(lay.first, lps[0], neg) if t == 0 else _step(prev, lay.into, L) + lps[t]
        prev = F.where(keep[t], cur, neg)
        steps.append(prev)
    steps += [neg.expand(tuple(lpe.shape[1:]))] * (T - frames)
    alpha = F.stack(steps, 1)
    # Near log(0) is log(0), with no gradient (a constant -inf, as the kernel's).
    log0 = F.full((), float("-inf"), dtype=alpha.dtype, device=alpha.device)
    return F.where(alpha > _NEG / 2, alpha, log0)


def _beta(lpe, lay, neg):
    """log beta (T, N, L), the kernel's: log_probs of time t included; log(0) elsewhere."""
    T, L = lpe.shape[0], lay.L
    frames = max(lay.il, default=0)
    # Each sample's beta starts at its last frame; earlier frames recurse.
    start = F.where(lay.last & (lay.frames == lay.lengths - 1), lpe, neg).unbind(0)
    recurse = (lay.valid & (lay.frames < lay.lengths - 1)).unbind(0)
    lps = lpe.unbind(0)
    steps = [neg.expand(tuple(lpe.shape[1:]))] * T
    nxt = None
    for t in range(frames - 1, -1, -1):
        if nxt is None:
            nxt = start[t]
        else:
            nxt = F.where(recurse[t], _step(nxt, lay.out_of, L) + lps[t], start[t])
        steps[t] = nxt
    return F.stack(steps)


def _backward(grad, lp, nll, la, lay, zero_infinity):
    """What _ctc_loss_backward computes: (exp(lp) - sum over the states s of label c of
    exp(alpha + beta + nll - lp)) * grad, zero past input_lengths and, with zero_infinity,
    for infinite losses."""
    T, N, C = lp.shape
    neg = F.full((), _NEG, dtype=lp.dtype, device=lp.device)
    lpe = lay.at_labels(lp)
    lb = _beta(lpe, lay, neg)
    zero = nll == float("inf") if zero_infinity else F.zeros(N, dtype=F.bool, device=lp.device)
    nl = F.where(zero, F.zeros((), dtype=nll.dtype, device=nll.device), nll).reshape(1, N, 1)
    la = la[:, :, : lay.L].transpose(0, 1).to(lp.dtype)  # (T, N, L)
    la = F.where(lay.live & lay.valid, la, neg)
    term = F.exp(la + lb + nl - lpe)
    onehot = (lay.ext.unsqueeze(-1) == F.arange(C, device=lp.device)).to(lp.dtype)  # (N, L, C)
    post = F.matmul(term.transpose(0, 1), onehot).transpose(0, 1)
    out = (F.exp(lp) - post) * grad.to(lp.dtype).reshape(1, -1, 1)
    keep = lay.live & ~zero.reshape(1, N, 1)
    return F.where(keep, out, F.zeros((), dtype=out.dtype, device=out.device))


@formula("_ctc_loss", "_ctc_loss.Tensor", needs_result=True)
def _ctc_loss(g, a):
    g_nll, g_alpha = g if isinstance(g, tuple) else (g, None)
    lp = a["log_probs"]
    grads = []
    nll, log_alpha = a["results"]
    if g_nll is not None:
        lengths = (a["input_lengths"], a["target_lengths"])
        grads.append(
            F._ctc_loss_backward(
                g_nll, lp, a["targets"], *lengths, nll, log_alpha, a["blank"], a["zero_infinity"]
            )
        )
    if g_alpha is not None and max(_lengths(a["input_lengths"]), default=0) > 0:
        # log_alpha used directly, or double backward (log_alpha is constant without input)
        lay = _Layout(a, lp.shape[0], lp.shape[1], lp.device)
        g_alpha = g_alpha[:, :, : lay.L]
        neg = F.full((), _NEG, dtype=lp.dtype, device=lp.device)
        grads += _vjp(lambda x: (_alpha(lay.at_labels(x), lay, neg),), [lp], [g_alpha])
    grads = [x for x in grads if x is not None]
    if not grads:
        return {}
    return {"log_probs": grads[0] if len(grads) == 1 else grads[0] + grads[1]}


@formula("_ctc_loss_backward", "_ctc_loss_backward.Tensor")
def _ctc_loss_backward(g, a):
    lp = a["log_probs"]
    lay = _Layout(a, lp.shape[0], lp.shape[1], lp.device)
    names = ("grad", "log_probs", "neg_log_likelihood", "log_alpha")

    def fn(grad, lp, nll, la):
        return (_backward(grad, lp, nll, la, lay, a["zero_infinity"]),)

    grads = _vjp(fn, [a[n] for n in names], [_first(g)])
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@composite("ctc_loss", "ctc_loss.Tensor")
def _ctc_loss_composite(call, a):
    lp, targets = a["log_probs"], a["targets"]
    il, tl, reduction = a["input_lengths"], a["target_lengths"], a["reduction"]
    if reduction not in (0, 1, 2):
        raise ValueError(f"ctc_loss: {reduction} is not a valid value for reduction")
    batched = lp.dim() != 2
    if not batched:
        lp, targets = call("unsqueeze", lp, 1), call("unsqueeze", targets, 0)
    nll = call("_ctc_loss", lp, targets, il, tl, a["blank"], a["zero_infinity"])[0]
    if a["zero_infinity"]:
        zero = F.zeros((), dtype=nll.dtype, device=nll.device)
        nll = call("where", nll == float("inf"), zero, nll)
    if reduction == 1:
        # target_lengths may be a list or a CPU tensor beside a device's log_probs
        lengths = tl if isinstance(tl, F.Tensor) else F.tensor(list(tl))
        lengths = lengths.to(device=nll.device, dtype=nll.dtype).clamp_min(1)
        return call("mean", call("div", nll, lengths))
    if reduction == 2:
        return call("sum", nll)
    return nll if batched else call("squeeze", nll, 0)
