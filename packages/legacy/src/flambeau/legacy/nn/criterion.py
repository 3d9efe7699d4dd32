"""The Torch7 `nn.Criterion` contract and the criteria that combine others."""

from __future__ import annotations

import copy

import flambeau

from .module import _convert, _dtype_of, reuse


class Criterion:
    """`forward(input, target)` returns the loss (a Python float, kept in `output`);
    `backward(input, target)` returns `gradInput`, the loss's gradient w.r.t. input.

    >>> from flambeau.legacy import nn
    >>> class L1(nn.Criterion):
    ...     def updateOutput(self, input, target):
    ...         self.output = float((input - target).abs().sum())
    ...         return self.output
    >>> L1().forward(flambeau.tensor([1.0, 2.0]), flambeau.tensor([0.0, 4.0]))
    3.0
    """

    def __init__(self):
        self.gradInput = flambeau.empty(0)
        self.output = 0.0

    def updateOutput(self, input, target):
        raise TypeError(f"{type(self).__name__} does not define updateOutput")

    def forward(self, input, target):
        return self.updateOutput(input, target)

    def updateGradInput(self, input, target):
        raise TypeError(f"{type(self).__name__} does not define updateGradInput")

    def backward(self, input, target):
        return self.updateGradInput(input, target)

    def __call__(self, input, target):
        self.output = self.forward(input, target)
        self.gradInput = self.backward(input, target)
        return self.output, self.gradInput

    def clone(self):
        return copy.deepcopy(self)

    def type(self, type, tensorCache=None):
        dtype = _dtype_of(type)
        cache = {} if tensorCache is None else tensorCache
        for key, value in list(vars(self).items()):
            setattr(self, key, _convert(value, dtype, cache))
        return self

    def float(self):
        return self.type("torch.FloatTensor")

    def double(self):
        return self.type("torch.DoubleTensor")

    def _set_grad(self, value):
        self.gradInput = reuse(self.gradInput, value)
        return self.gradInput

    def __repr__(self):
        return "nn." + type(self).__name__


class MultiCriterion(Criterion):
    """Weighted sum of criteria applied to the same input and target.

    >>> from flambeau.legacy import nn
    >>> crit = nn.MultiCriterion().add(nn.MSECriterion()).add(nn.AbsCriterion(), 0.5)
    >>> crit.forward(flambeau.tensor([1.0, 2.0, 3.0, 4.0]), flambeau.tensor([1.0, 0.0, 5.0, 4.0]))
    2.5
    """

    def __init__(self):
        super().__init__()
        self.criterions = []
        self.weights = []

    def add(self, criterion, weight=1):
        self.criterions.append(criterion)
        self.weights.append(weight)
        return self

    def updateOutput(self, input, target):
        self.output = 0.0
        for c, w in zip(self.criterions, self.weights):
            self.output += w * c.updateOutput(input, target)
        return self.output

    def updateGradInput(self, input, target):
        total = flambeau.zeros_like(input)
        for c, w in zip(self.criterions, self.weights):
            total.add_(c.updateGradInput(input, target), alpha=w)
        return self._set_grad(total)


class ParallelCriterion(Criterion):
    """Weighted sum of criterion i applied to input[i] and target[i] (or the same target
    for every criterion when repeatTarget=True).

    >>> from flambeau.legacy import nn
    >>> crit = nn.ParallelCriterion().add(nn.MSECriterion()).add(nn.AbsCriterion(), 0.5)
    >>> x, t = flambeau.tensor([1.0, 3.0]), flambeau.tensor([0.0, 1.0])
    >>> crit.forward([x, x], [t, t])
    3.25
    """

    def __init__(self, repeatTarget=False):
        super().__init__()
        self.criterions = []
        self.weights = []
        self.repeatTarget = repeatTarget
        self.gradInput = []

    def add(self, criterion, weight=1):
        self.criterions.append(criterion)
        self.weights.append(weight)
        return self

    def _target(self, target, i):
        return target if self.repeatTarget else target[i]

    def updateOutput(self, input, target):
        self.output = 0.0
        for i, (c, w) in enumerate(zip(self.criterions, self.weights)):
            self.output += w * c.updateOutput(input[i], self._target(target, i))
        return self.output

    def updateGradInput(self, input, target):
        grads = []
        for i, (c, w) in enumerate(zip(self.criterions, self.weights)):
            grads.append(_scaled(c.updateGradInput(input[i], self._target(target, i)), w))
        self.gradInput = grads
        return self.gradInput


def _scaled(grad, w):
    if isinstance(grad, flambeau.Tensor):
        return grad * w
    return [_scaled(g, w) for g in grad]
