"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al. (2016) for large
vocabularies, frequent classes in a head and the rest in smaller clusters."""

from __future__ import annotations

from collections import namedtuple

import flambeau

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of the targets (and their mean negative as the loss) under an
    adaptive softmax.

    Classes [0, cutoffs[0]) are scored by the head; cluster i holds classes
    [cutoffs[i], cutoffs[i + 1]) (the last ends at n_classes) and is scored by the head's
    logit for the cluster plus a two-layer projection of width in_features // div_value^(i+1).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> asm = nn.AdaptiveLogSoftmaxWithLoss(in_features=16, n_classes=10, cutoffs=[4, 8])
    >>> out = asm(flambeau.randn(3, 16), flambeau.tensor([1, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (flambeau.Size([3]), flambeau.Size([]))
    >>> asm.log_prob(flambeau.randn(3, 16)).exp().sum(1)
    tensor([1.0000, 1.0000, 1.0000], grad_fn=<...>)
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > (n_classes - 1)
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))  # fmt: skip

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        """(output, loss): the log-probability of each target, and the mean of -output."""
        if target_.dim() == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{input_.shape}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)

        # Each row reads the head at its class (shortlist) or at its cluster's logit, plus,
        # for a cluster, the log-probability of the class within the cluster.
        head_index = target.clone()
        cluster_terms = []
        used_rows = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            in_range = (target >= low) & (target < high)
            rows = in_range.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            used_rows += rows.numel()
            if i == 0:
                continue
            head_index = head_index.masked_fill(in_range, self.shortlist_size + i - 1)
            relative = (target.index_select(0, rows) - low).unsqueeze(1)
            cluster_out = self.tail[i - 1](input.index_select(0, rows))
            local = F.log_softmax(cluster_out, dim=1).gather(1, relative).squeeze(1)
            cluster_terms.append((rows, local))
        if used_rows != target.shape[0]:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        for rows, local in cluster_terms:
            output = output.index_add(0, rows, local)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return flambeau.cat(pieces, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class: (N, n_classes) for input (N, in_features)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row of (N, in_features); cheaper than
        log_prob(input).argmax(1) when the head already decides."""
        head_output = self.head(input)
        output = flambeau.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return flambeau.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = flambeau.argmax(log_prob, dim=1)
        return output
