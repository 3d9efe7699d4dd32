"""Loss criteria. With sizeAverage=True the loss is averaged as Torch7 averages it (over
every element for element-wise losses, over the batch for per-sample ones); class indices
are 0-based."""

from __future__ import annotations

import flambeau

from .criterion import Criterion
from .transfer import LogSoftMax

_MEAN, _SUM = 1, 2


def _reduction(size_average):
    return _MEAN if size_average else _SUM


def _as_tensor(target, like):
    if isinstance(target, flambeau.Tensor):
        return target
    return flambeau.tensor(target, dtype=like.dtype)


def _same_shape(name, input, target):
    if input.numel() != target.numel():
        raise ValueError(
            f"{name}: input and target must have the same number of elements, "
            f"got {tuple(input.shape)} and {tuple(target.shape)}"
        )
    return target.reshape(input.shape)


class _ElementwiseKernel(Criterion):
    """Losses the core computes with a forward and a backward kernel."""

    def __init__(self, sizeAverage=True):
        super().__init__()
        self.sizeAverage = sizeAverage

    def _target(self, input, target):
        return _same_shape(type(self).__name__, input, _as_tensor(target, input).to(input.dtype))

    def updateOutput(self, input, target):
        t = self._target(input, target)
        self.output = float(self._loss(input, t, _reduction(self.sizeAverage)))
        return self.output

    def updateGradInput(self, input, target):
        t = self._target(input, target)
        one = flambeau.ones((), dtype=input.dtype)
        return self._set_grad(self._grad(one, input, t, _reduction(self.sizeAverage)))


class MSECriterion(_ElementwiseKernel):
    """Σ (x - t)² (/ n).

    >>> from flambeau.legacy import nn
    >>> x, t = flambeau.tensor([1.0, 2.0, 3.0, 4.0]), flambeau.tensor([1.0, 0.0, 5.0, 4.0])
    >>> nn.MSECriterion().forward(x, t)
    2.0
    >>> nn.MSECriterion().backward(x, t)
    tensor([ 0.,  1., -1.,  0.])
    """

    def _loss(self, x, t, r):
        return flambeau.mse_loss(x, t, r)

    def _grad(self, g, x, t, r):
        return flambeau.mse_loss_backward(g, x, t, r)


class AbsCriterion(_ElementwiseKernel):
    """Σ |x - t| (/ n).

    >>> from flambeau.legacy import nn
    >>> x, t = flambeau.tensor([1.0, 2.0, 3.0, 4.0]), flambeau.tensor([1.0, 0.0, 5.0, 4.0])
    >>> nn.AbsCriterion().forward(x, t)
    1.0
    >>> nn.AbsCriterion().backward(x, t)
    tensor([ 0.0000,  0.2500, -0.2500,  0.0000])
    """

    def _loss(self, x, t, r):
        return flambeau.l1_loss(x, t, r)

    def _grad(self, g, x, t, r):
        d = (x - t).sign()
        return d / x.numel() if r == _MEAN else d


class SmoothL1Criterion(_ElementwiseKernel):
    """Σ (½ d² if |d| < 1 else |d| - ½) (/ n), d = x - t.

    >>> from flambeau.legacy import nn
    >>> x, t = flambeau.tensor([0.0, 2.0]), flambeau.tensor([0.5, 0.0])
    >>> nn.SmoothL1Criterion().forward(x, t)
    0.8125
    """

    def _loss(self, x, t, r):
        return flambeau.smooth_l1_loss(x, t, r, 1.0)

    def _grad(self, g, x, t, r):
        return flambeau.smooth_l1_loss_backward(g, x, t, r, 1.0)


class BCECriterion(_ElementwiseKernel):
    """-Σ w (t log x + (1 - t) log(1 - x)) (/ n) for probabilities x; optional per-element
    (or per-class, broadcast over a batch) weights.

    >>> from flambeau.legacy import nn
    >>> x, t = flambeau.tensor([0.8, 0.4]), flambeau.tensor([1.0, 0.0])
    >>> round(nn.BCECriterion().forward(x, t), 4)
    0.367
    """

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__(sizeAverage)
        self.weights = weights

    def _w(self, x):
        return None if self.weights is None else self.weights.to(x.dtype).expand_as(x)

    def _loss(self, x, t, r):
        return flambeau.binary_cross_entropy(x, t, self._w(x), r)

    def _grad(self, g, x, t, r):
        return flambeau.binary_cross_entropy_backward(g, x, t, self._w(x), r)


class WeightedMSECriterion(MSECriterion):
    """MSECriterion against the target multiplied element-wise by `weight` (Torch7's
    definition: the weight scales the target, per sample of a batch).

    >>> from flambeau.legacy import nn
    >>> crit = nn.WeightedMSECriterion(flambeau.tensor([1.0, 2.0]))
    >>> crit.forward(flambeau.tensor([1.0, 4.0]), flambeau.tensor([1.0, 1.0]))
    2.0
    """

    def __init__(self, weight, sizeAverage=True):
        super().__init__(sizeAverage)
        self.weight = weight

    def _target(self, input, target):
        t = _as_tensor(target, input).to(input.dtype)
        w = self.weight.to(input.dtype)
        t = t * (w.unsqueeze(0) if t.dim() == w.dim() + 1 else w.view(t.shape))
        return _same_shape("WeightedMSECriterion", input, t)


class DistKLDivCriterion(_ElementwiseKernel):
    """Σ t (log t - x) over t > 0 (/ n), for log-probabilities x and probabilities t.

    >>> from flambeau.legacy import nn
    >>> logp, p = flambeau.tensor([-1.0, -2.0]), flambeau.tensor([1.0, 0.0])
    >>> nn.DistKLDivCriterion().forward(logp, p)
    0.5
    """

    def _loss(self, x, t, r):
        pos = t > 0
        terms = flambeau.where(pos, t * (flambeau.log(flambeau.where(pos, t, 1)) - x), 0)
        total = terms.sum()
        return total / x.numel() if r == _MEAN else total

    def _grad(self, g, x, t, r):
        d = flambeau.where(t > 0, -t, 0).to(x.dtype)
        return d / x.numel() if r == _MEAN else d


class MarginCriterion(_ElementwiseKernel):
    """Σ max(0, margin - y x) (/ n) for labels y = ±1.

    >>> from flambeau.legacy import nn
    >>> x, y = flambeau.tensor([0.5, 2.0, -0.5, 1.0]), flambeau.tensor([1.0, 1.0, -1.0, -1.0])
    >>> nn.MarginCriterion(margin=1).forward(x, y)
    0.75
    """

    def __init__(self, margin=1, sizeAverage=True):
        super().__init__(sizeAverage)
        self.margin = margin

    def _loss(self, x, y, r):
        total = flambeau.clamp_min(self.margin - y * x, 0).sum()
        return total / x.numel() if r == _MEAN else total

    def _grad(self, g, x, y, r):
        d = flambeau.where(self.margin - y * x > 0, -y, 0).to(x.dtype)
        return d / x.numel() if r == _MEAN else d


class SoftMarginCriterion(_ElementwiseKernel):
    """Σ log(1 + exp(-y x)) (/ n) for labels y = ±1.

    >>> from flambeau.legacy import nn
    >>> x, y = flambeau.tensor([0.0, 2.0]), flambeau.tensor([1.0, -1.0])
    >>> round(nn.SoftMarginCriterion().forward(x, y), 4)
    1.41
    """

    def _loss(self, x, y, r):
        total = -flambeau.log_sigmoid(y * x).sum()
        return total / x.numel() if r == _MEAN else total

    def _grad(self, g, x, y, r):
        d = -y * flambeau.sigmoid(-y * x)
        return d / x.numel() if r == _MEAN else d


class HingeEmbeddingCriterion(_ElementwiseKernel):
    """Σ (x if y = 1 else max(0, margin - x)) (/ n), for distances x and labels y = ±1.

    >>> from flambeau.legacy import nn
    >>> d, y = flambeau.tensor([0.5, 0.25, 2.0, 1.0]), flambeau.tensor([1.0, -1.0, -1.0, 1.0])
    >>> nn.HingeEmbeddingCriterion(margin=1).forward(d, y)
    0.5625
    """

    def __init__(self, margin=1, sizeAverage=True):
        super().__init__(sizeAverage)
        self.margin = margin

    def _loss(self, x, y, r):
        terms = flambeau.where(y == 1, x, 0) + flambeau.where(
            y == -1, flambeau.clamp_min(self.margin - x, 0), 0
        )
        total = terms.sum()
        return total / x.numel() if r == _MEAN else total

    def _grad(self, g, x, y, r):
        d = flambeau.where(y == 1, 1.0, 0.0) - flambeau.where(
            (y == -1) & (self.margin - x > 0), 1.0, 0.0
        )
        d = d.to(x.dtype)
        return d / x.numel() if r == _MEAN else d


class ClassNLLCriterion(Criterion):
    """-w[t] x[t] for log-probabilities x (C) or (N, C) and 0-based class indices t; with
    sizeAverage the weighted mean Σ -w[t_n] x[n, t_n] / Σ w[t_n], as PyTorch's NLLLoss.
    Targets equal to ignoreIndex count for nothing.

    >>> from flambeau.legacy import nn
    >>> logp = flambeau.tensor([[-0.5, -1.0, -2.0], [-1.0, -2.0, -0.25]])
    >>> nn.ClassNLLCriterion().forward(logp, flambeau.tensor([0, 2]))
    0.375
    """

    def __init__(self, weights=None, sizeAverage=True, ignoreIndex=-100):
        super().__init__()
        self.weights = weights
        self.sizeAverage = sizeAverage
        self.ignoreIndex = ignoreIndex
        self.total_weight = None

    def _args(self, input, target):
        if not isinstance(target, flambeau.Tensor):
            target = flambeau.tensor(target, dtype=flambeau.int64)
        if target.is_floating_point():
            target = target.long()  # Torch7 code often keeps labels in float tensors
        if input.dim() == 1:
            target = target.reshape(())
        w = None if self.weights is None else self.weights.to(input.dtype)
        self._check(input, target)
        return input, target.long(), w

    def _check(self, input, target):
        n = input.shape[0] if input.dim() == 1 else input.shape[1]
        valid = target[target != self.ignoreIndex]
        if valid.numel() and (int(valid.min()) < 0 or int(valid.max()) >= n):
            raise IndexError(f"{type(self).__name__}: class indices must lie in [0, {n})")

    def updateOutput(self, input, target):
        x, t, w = self._args(input, target)
        loss, self.total_weight = flambeau.nll_loss_forward(
            x, t, w, _reduction(self.sizeAverage), self.ignoreIndex
        )
        self.output = float(loss)
        return self.output

    def updateGradInput(self, input, target):
        x, t, w = self._args(input, target)
        if self.total_weight is None:
            self.updateOutput(input, target)
        g = flambeau.nll_loss_backward(
            flambeau.ones((), dtype=x.dtype), x, t, w, _reduction(self.sizeAverage),
            self.ignoreIndex, self.total_weight,
        )  # fmt: skip
        return self._set_grad(g)


class SpatialClassNLLCriterion(ClassNLLCriterion):
    """ClassNLLCriterion at every pixel: input (N, C, H, W), target (N, H, W).

    >>> from flambeau.legacy import nn
    >>> logp = flambeau.tensor([[[[-1.0, -2.0]], [[-3.0, -4.0]]]])  # (N, C, H, W) = (1, 2, 1, 2)
    >>> nn.SpatialClassNLLCriterion().forward(logp, flambeau.tensor([[[0, 1]]]))
    2.5
    """

    def _args(self, input, target):
        if input.dim() != 4:
            raise ValueError("SpatialClassNLLCriterion expects a 4-D input (N, C, H, W)")
        return super()._args(input, target)

    def _check(self, input, target):
        n = input.shape[1]
        valid = target[target != self.ignoreIndex]
        if valid.numel() and (int(valid.min()) < 0 or int(valid.max()) >= n):
            raise IndexError(f"{type(self).__name__}: class indices must lie in [0, {n})")


class CrossEntropyCriterion(Criterion):
    """LogSoftMax followed by ClassNLLCriterion.

    >>> from flambeau.legacy import nn
    >>> logits = flambeau.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> round(nn.CrossEntropyCriterion().forward(logits, flambeau.tensor([0, 2])), 4)
    0.6691
    """

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__()
        self.lsm = LogSoftMax()
        self.nll = ClassNLLCriterion(weights, sizeAverage)

    def updateOutput(self, input, target):
        self.output = self.nll.updateOutput(self.lsm.updateOutput(input), target)
        return self.output

    def updateGradInput(self, input, target):
        self.lsm.updateOutput(input)
        g = self.nll.updateGradInput(self.lsm.output, target)
        return self._set_grad(self.lsm.updateGradInput(input, g))


def _per_sample(input):
    if input.dim() == 1:
        return input.unsqueeze(0), True
    if input.dim() != 2:
        raise ValueError(f"expected a 1-D or 2-D input, got {input.dim()}-D")
    return input, False


class MultiMarginCriterion(Criterion):
    """Multi-class hinge loss: Σ_{i≠y} w[y] max(0, margin - x[y] + x[i])^p / C, p ∈ {1, 2},
    averaged over the batch with sizeAverage.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(nn.MultiMarginCriterion().forward(x, flambeau.tensor([3])), 4)
    0.325
    """

    def __init__(self, p=1, weights=None, margin=1, sizeAverage=True):
        super().__init__()
        if p not in (1, 2):
            raise ValueError("MultiMarginCriterion: p must be 1 or 2")
        self.p, self.weights, self.margin, self.sizeAverage = p, weights, margin, sizeAverage

    def _parts(self, input, target):
        x, _ = _per_sample(input)
        t = _as_tensor(target, flambeau.empty(0, dtype=flambeau.int64)).reshape(-1).long()
        n, c = x.shape
        if t.numel() != n or int(t.min()) < 0 or int(t.max()) >= c:
            raise IndexError(f"MultiMarginCriterion: need {n} class indices in [0, {c})")
        xy = x.gather(1, t.unsqueeze(1))
        z = self.margin - xy + x
        z.scatter_(1, t.unsqueeze(1), 0)  # the target's own term does not count
        z = flambeau.clamp_min(z, 0)
        w = (
            flambeau.ones(n, 1, dtype=x.dtype)
            if self.weights is None
            else self.weights.to(x.dtype)[t].unsqueeze(1)
        )
        norm = c * (n if self.sizeAverage else 1)
        return x, t, z, w, norm

    def updateOutput(self, input, target):
        x, t, z, w, norm = self._parts(input, target)
        h = z if self.p == 1 else z * z
        self.output = float((h * w).sum() / norm)
        return self.output

    def updateGradInput(self, input, target):
        x, t, z, w, norm = self._parts(input, target)
        dh = (z > 0).to(x.dtype) if self.p == 1 else 2 * z
        g = dh * w / norm
        g.scatter_(1, t.unsqueeze(1), -g.sum(1, keepdim=True))
        return self._set_grad(g.view(input.shape))


class MultiLabelMarginCriterion(Criterion):
    """Σ_{j ∈ targets} Σ_{i ∉ targets} max(0, 1 - (x[j] - x[i])) / C per sample; each target
    row lists 0-based class indices and ends at the first -1. Batch mean with sizeAverage.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(nn.MultiLabelMarginCriterion().forward(x, flambeau.tensor([[3, 0, -1, 1]])), 4)
    0.85
    """

    def __init__(self, sizeAverage=True):
        super().__init__()
        self.sizeAverage = sizeAverage

    def _masks(self, x, target):
        t = _as_tensor(target, flambeau.empty(0, dtype=flambeau.int64)).long().reshape(x.shape)
        n, c = x.shape
        # is_target[n, k]: class k appears in row n before the first -1.
        stop = (t < 0).to(flambeau.int64).cumsum(1) > 0
        valid = ~stop
        if bool(((t >= c) & valid).any()):
            raise IndexError(f"MultiLabelMarginCriterion: class indices must lie in [0, {c})")
        is_target = flambeau.zeros(n, c, dtype=x.dtype)
        safe = flambeau.where(valid, t, 0)
        is_target.scatter_add_(1, safe, valid.to(x.dtype))
        return is_target.clamp_max(1) > 0

    def _hinge(self, input, target):
        x, _ = _per_sample(input)
        tgt = self._masks(x, target)
        # pair[n, j, i] = max(0, 1 - x[j] + x[i]) for j a target and i not.
        pair = flambeau.clamp_min(1 - x.unsqueeze(2) + x.unsqueeze(1), 0)
        mask = (tgt.unsqueeze(2) & ~tgt.unsqueeze(1)).to(x.dtype)
        norm = x.shape[1] * (x.shape[0] if self.sizeAverage else 1)
        return x, pair * mask, (pair > 0).to(x.dtype) * mask, norm

    def updateOutput(self, input, target):
        _, h, _, norm = self._hinge(input, target)
        self.output = float(h.sum() / norm)
        return self.output

    def updateGradInput(self, input, target):
        x, _, active, norm = self._hinge(input, target)
        g = (active.sum(1) - active.sum(2)) / norm  # +1 per pair for i, -1 for j
        return self._set_grad(g.view(input.shape))


class MultiLabelSoftMarginCriterion(Criterion):
    """-Σ w (t log σ(x) + (1 - t) log σ(-x)), averaged over every element with sizeAverage
    (Torch7: Sigmoid followed by BCECriterion).

    >>> from flambeau.legacy import nn
    >>> x, t = flambeau.tensor([[0.0, 2.0]]), flambeau.tensor([[1.0, 0.0]])
    >>> round(nn.MultiLabelSoftMarginCriterion().forward(x, t), 4)
    1.41
    """

    def __init__(self, weights=None, sizeAverage=True):
        super().__init__()
        self.weights, self.sizeAverage = weights, sizeAverage

    def _w(self, x):
        return 1 if self.weights is None else self.weights.to(x.dtype)

    def updateOutput(self, input, target):
        t = _same_shape(type(self).__name__, input, _as_tensor(target, input).to(input.dtype))
        terms = -(t * flambeau.log_sigmoid(input) + (1 - t) * flambeau.log_sigmoid(-input))
        total = (terms * self._w(input)).sum()
        self.output = float(total / input.numel() if self.sizeAverage else total)
        return self.output

    def updateGradInput(self, input, target):
        t = _same_shape(type(self).__name__, input, _as_tensor(target, input).to(input.dtype))
        g = (flambeau.sigmoid(input) - t) * self._w(input)
        return self._set_grad(g / input.numel() if self.sizeAverage else g)


class L1HingeEmbeddingCriterion(Criterion):
    """For a pair {x1, x2} of vectors and y = ±1: d = ‖x1 - x2‖₁ when y = 1,
    max(0, margin - d) when y = -1.

    >>> from flambeau.legacy import nn
    >>> x1, x2 = flambeau.tensor([1.0, 2.0]), flambeau.tensor([0.0, 4.0])
    >>> nn.L1HingeEmbeddingCriterion(margin=5).forward([x1, x2], 1)
    3.0
    >>> nn.L1HingeEmbeddingCriterion(margin=5).forward([x1, x2], -1)
    2.0
    """

    def __init__(self, margin=1):
        super().__init__()
        self.margin = margin
        self.gradInput = []

    def updateOutput(self, input, target):
        d = float((input[0] - input[1]).abs().sum())
        y = float(target)
        self.output = d if y == 1 else max(0.0, self.margin - d)
        return self.output

    def updateGradInput(self, input, target):
        diff = input[0] - input[1]
        y = float(target)
        s = diff.sign()
        if y == -1:
            s = -s if self.margin - float(diff.abs().sum()) > 0 else flambeau.zeros_like(s)
        self.gradInput = [s, -s]
        return self.gradInput


class CosineEmbeddingCriterion(Criterion):
    """For pairs {x1, x2} (rows) and y = ±1: 1 - cos when y = 1, max(0, cos - margin) when
    y = -1; batch mean with sizeAverage. Squared norms get Torch7's 1e-12.

    >>> from flambeau.legacy import nn
    >>> x1 = flambeau.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> x2 = flambeau.tensor([[0.0, 1.0], [2.0, 2.0]])
    >>> round(nn.CosineEmbeddingCriterion().forward([x1, x2], flambeau.tensor([1.0, 1.0])), 4)
    0.5
    """

    eps = 1e-12

    def __init__(self, margin=0, sizeAverage=True):
        super().__init__()
        self.margin, self.sizeAverage = margin, sizeAverage
        self.gradInput = []

    def _parts(self, input, target):
        a, single = _per_sample(input[0])
        b, _ = _per_sample(input[1])
        y = _as_tensor(target, a).to(a.dtype).reshape(-1)
        aa = (a * a).sum(1) + self.eps
        bb = (b * b).sum(1) + self.eps
        ab = (a * b).sum(1)
        cos = ab / flambeau.sqrt(aa * bb)
        return a, b, y, aa, bb, cos, single

    def updateOutput(self, input, target):
        _, _, y, _, _, cos, _ = self._parts(input, target)
        terms = flambeau.where(y == 1, 1 - cos, flambeau.clamp_min(cos - self.margin, 0))
        total = terms.sum()
        self.output = float(total / y.numel() if self.sizeAverage else total)
        return self.output

    def updateGradInput(self, input, target):
        a, b, y, aa, bb, cos, single = self._parts(input, target)
        # d cos / d a = b / (|a||b|) - cos a / |a|²  (and symmetrically for b)
        na_nb = flambeau.sqrt(aa * bb).unsqueeze(1)
        da = b / na_nb - cos.unsqueeze(1) * a / aa.unsqueeze(1)
        db = a / na_nb - cos.unsqueeze(1) * b / bb.unsqueeze(1)
        coef = flambeau.where(y == 1, -1.0, flambeau.where(cos - self.margin > 0, 1.0, 0.0)).to(
            a.dtype
        )
        if self.sizeAverage:
            coef = coef / y.numel()
        ga, gb = da * coef.unsqueeze(1), db * coef.unsqueeze(1)
        if single:
            ga, gb = ga.squeeze(0), gb.squeeze(0)
        self.gradInput = [ga, gb]
        return self.gradInput


class MarginRankingCriterion(Criterion):
    """max(0, -y (x1 - x2) + margin) for a pair {x1, x2} of scores and y = ±1; batch mean
    with sizeAverage.

    >>> from flambeau.legacy import nn
    >>> x1, x2 = flambeau.tensor([1.0, 2.0]), flambeau.tensor([2.0, 1.0])
    >>> nn.MarginRankingCriterion().forward([x1, x2], flambeau.tensor([1.0, 1.0]))
    0.5
    """

    def __init__(self, margin=0, sizeAverage=True):
        super().__init__()
        self.margin, self.sizeAverage = margin, sizeAverage
        self.gradInput = []

    def _parts(self, input, target):
        x1 = _as_tensor(input[0], flambeau.empty(0)).reshape(-1)
        x2 = _as_tensor(input[1], x1).reshape(-1).to(x1.dtype)
        y = _as_tensor(target, x1).to(x1.dtype).reshape(-1)
        return x1, x2, y

    def updateOutput(self, input, target):
        x1, x2, y = self._parts(input, target)
        total = flambeau.clamp_min(-y * (x1 - x2) + self.margin, 0).sum()
        self.output = float(total / y.numel() if self.sizeAverage else total)
        return self.output

    def updateGradInput(self, input, target):
        x1, x2, y = self._parts(input, target)
        active = (-y * (x1 - x2) + self.margin > 0).to(x1.dtype)
        g1 = -y * active
        if self.sizeAverage:
            g1 = g1 / y.numel()
        shape = input[0].shape if isinstance(input[0], flambeau.Tensor) else g1.shape
        self.gradInput = [g1.reshape(shape), (-g1).reshape(shape)]
        return self.gradInput
