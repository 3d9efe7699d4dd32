"""Loss modules: the core's loss kernels, or compositions of its operators."""

from __future__ import annotations

import math
import warnings

from .. import _reduction
from .. import functional as F
from .linear import Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _reduction.legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class L1Loss(_Loss):
    """Mean (or sum, or none) of |input - target|.

    >>> import flambeau.nn as nn
    >>> loss = nn.L1Loss()
    >>> loss(flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([1.5, 2.0, 1.0]))
    tensor(0.8333)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum, or none) of (input - target)^2.

    >>> import flambeau.nn as nn
    >>> loss = nn.MSELoss()
    >>> loss(flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([1.5, 2.0, 1.0]))
    tensor(1.4167)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)); target in {1, -1}.

    >>> import flambeau.nn as nn
    >>> loss = nn.SoftMarginLoss()
    >>> loss(flambeau.tensor([2.0, -1.0, 0.0]), flambeau.tensor([1.0, 1.0, -1.0]))
    tensor(0.7111)
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (input1 - input2) + margin).

    >>> import flambeau.nn as nn
    >>> loss = nn.MarginRankingLoss(margin=0.5)
    >>> x1, x2 = flambeau.tensor([1.0, 2.0, 0.0]), flambeau.tensor([0.0, 2.5, 1.0])
    >>> loss(x1, x2, flambeau.tensor([1.0, 1.0, -1.0]))
    tensor(0.3333)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x where target is 1, max(0, margin - x) where target is -1.

    >>> import flambeau.nn as nn
    >>> loss = nn.HingeEmbeddingLoss(margin=1.0)
    >>> loss(flambeau.tensor([0.3, 0.2, 2.0]), flambeau.tensor([1.0, -1.0, -1.0]))
    tensor(0.3667)
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.

    >>> import flambeau.nn as nn
    >>> loss = nn.CosineEmbeddingLoss()
    >>> x1 = flambeau.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> x2 = flambeau.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> loss(x1, x2, flambeau.tensor([1.0, -1.0]))
    tensor(0.8536)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class PoissonNLLLoss(_Loss):
    """Negative log likelihood of a Poisson target.

    >>> import flambeau.nn as nn
    >>> loss = nn.PoissonNLLLoss()
    >>> log_rate = flambeau.tensor([0.0, 1.0, -1.0])
    >>> loss(log_rate, flambeau.tensor([1.0, 3.0, 0.0]))
    tensor(0.3621)
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(
            log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
            reduction=self.reduction,
        )  # fmt: skip


class GaussianNLLLoss(_Loss):
    """Negative log likelihood of a Gaussian target with predicted mean and variance.

    >>> import flambeau.nn as nn
    >>> loss = nn.GaussianNLLLoss()
    >>> mean, target = flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.5, 2.0])
    >>> var = flambeau.tensor([1.0, 0.5])
    >>> loss(mean, target, var)
    tensor(-0.1108)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)) with the p-norm distance.

    >>> import flambeau.nn as nn
    >>> loss = nn.TripletMarginLoss(margin=1.0)
    >>> anchor = flambeau.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> positive = flambeau.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> negative = flambeau.tensor([[3.0, 4.0], [1.0, 1.5]])
    >>> loss(anchor, positive, negative)
    tensor(0.2500)
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None,
                 reduction: str = "mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(
            anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
            swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance function.

    >>> import flambeau.nn as nn
    >>> l1 = nn.PairwiseDistance(p=1.0)
    >>> loss = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=1.0)
    >>> anchor = flambeau.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> positive = flambeau.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> negative = flambeau.tensor([[3.0, 4.0], [1.0, 1.5]])
    >>> loss(anchor, positive, negative)
    tensor(0.2500)
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):  # fmt: skip
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


# ---- losses backed by the core's loss kernels -----------------------------------------------


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class NLLLoss(_WeightedLoss):
    """-input[n, target[n]] weighted by class, input log-probabilities over dim 1.

    >>> import flambeau.nn as nn
    >>> loss = nn.NLLLoss()
    >>> log_probs = flambeau.tensor([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1]]).log()
    >>> loss(log_probs, flambeau.tensor([0, 1]))
    tensor(0.4581)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input, target, weight=self.weight, ignore_index=self.ignore_index,
            reduction=self.reduction,
        )  # fmt: skip


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see F.ctc_loss).

    >>> import flambeau.nn as nn
    >>> ctc = nn.CTCLoss()
    >>> T, N, C = 5, 2, 4
    >>> log_probs = flambeau.full((T, N, C), 0.25).log()
    >>> targets = flambeau.tensor([[1, 2], [3, 3]])
    >>> ctc(log_probs, targets, [T, T], [2, 2])
    tensor(1.8999)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
            self.zero_infinity,
        )  # fmt: skip


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax over dim 1 then NLL (class indices), or soft-label cross entropy.

    >>> import flambeau.nn as nn
    >>> loss = nn.CrossEntropyLoss()
    >>> logits = flambeau.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> loss(logits, flambeau.tensor([0, 2]))
    tensor(0.6691)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input, target, weight=self.weight, ignore_index=self.ignore_index,
            reduction=self.reduction, label_smoothing=self.label_smoothing,
        )  # fmt: skip


class BCELoss(_WeightedLoss):
    """-(y log x + (1 - y) log(1 - x)), x probabilities.

    >>> import flambeau.nn as nn
    >>> loss = nn.BCELoss()
    >>> loss(flambeau.tensor([0.8, 0.4, 0.5]), flambeau.tensor([1.0, 0.0, 1.0]))
    tensor(0.4757)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """BCELoss of sigmoid(x), computed stably; pos_weight scales the positive term.

    >>> import flambeau.nn as nn
    >>> loss = nn.BCEWithLogitsLoss(pos_weight=flambeau.tensor([2.0]))
    >>> loss(flambeau.tensor([1.5, -0.5, 0.0]), flambeau.tensor([1.0, 0.0, 1.0]))
    tensor(0.7544)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class KLDivLoss(_Loss):
    """target * (log(target) - input), input log-probabilities (target too with log_target).

    >>> import flambeau.nn as nn
    >>> loss = nn.KLDivLoss(reduction="batchmean")
    >>> input = flambeau.tensor([[0.25, 0.25, 0.5]]).log()
    >>> loss(input, flambeau.tensor([[0.5, 0.25, 0.25]]))
    tensor(0.1733)
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.

    >>> import flambeau.nn as nn
    >>> loss = nn.SmoothL1Loss(reduction="none")
    >>> loss(flambeau.tensor([0.0, 0.5, 3.0]), flambeau.tensor([0.0, 0.0, 0.0]))
    tensor([0.0000, 0.1250, 2.5000])
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).

    >>> import flambeau.nn as nn
    >>> loss = nn.HuberLoss(reduction="none", delta=2.0)
    >>> loss(flambeau.tensor([0.0, 1.0, 3.0]), flambeau.tensor([0.0, 0.0, 0.0]))
    tensor([0.0000, 0.5000, 4.0000])
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-sample mean over classes of the binary logistic loss.

    >>> import flambeau.nn as nn
    >>> loss = nn.MultiLabelSoftMarginLoss()
    >>> logits = flambeau.tensor([[2.0, -1.0, 0.0]])
    >>> loss(logits, flambeau.tensor([[1.0, 0.0, 1.0]]))
    tensor(0.3778)
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


# ---- multi-class margin losses, the deprecated NLLLoss2d, LinearCrossEntropyLoss -------------


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: sum over i != y of w[y] * max(0, margin - x[y] + x[i])^p / C.

    >>> import flambeau.nn as nn
    >>> loss = nn.MultiMarginLoss()
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> loss(x, flambeau.tensor([3]))
    tensor(0.3250)
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                 reduce=None, reduction: str = "mean"):  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                "MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{weight.dim()}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)  # fmt: skip


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss; target lists each sample's classes, ended by -1.

    >>> import flambeau.nn as nn
    >>> loss = nn.MultiLabelMarginLoss()
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> y = flambeau.tensor([[3, 0, -1, 1]])
    >>> loss(x, y)
    tensor(0.8500)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its old name for (N, C, H, W) input (deprecated, as in PyTorch).

    >>> import warnings
    >>> import flambeau.nn as nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     loss = nn.NLLLoss2d()
    >>> log_probs = flambeau.full((1, 2, 2, 2), 0.5).log()
    >>> loss(log_probs, flambeau.tensor([[[0, 1], [1, 0]]]))
    tensor(0.6931)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):  # fmt: skip
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
            "more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits made by an internal Linear layer: in_features to num_classes
    (times prod(out_features) for a K-dimensional loss, with logits (N, C, *out_features)).

    The Linear's weight is stored flat, (num_classes * prod(out_features), in_features),
    and reshaped in forward.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> loss = nn.LinearCrossEntropyLoss(in_features=8, num_classes=5)
    >>> hidden = flambeau.randn(4, 8)
    >>> out = loss(hidden, flambeau.tensor([0, 1, 4, 2]))
    >>> out.shape, loss.linear.weight.shape
    (flambeau.Size([]), flambeau.Size([5, 8]))
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features=(),
                 bias: bool = False, device=None, dtype=None, reduction: str = "mean",
                 weight=None, ignore_index=None, label_smoothing: float = 0.0,
                 options=None):  # fmt: skip
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features) * num_classes, bias=bias,
                             device=device, dtype=dtype)  # fmt: skip
        self.options = options

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.reshape(*shape, self.linear.in_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input, linear_weight, target,
            linear_bias=bias.reshape(shape) if bias is not None else None,
            weight=self.weight, reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
