"""Transfer (activation) functions: element-wise maps and their derivatives."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


class _Pointwise(Module):
    """y = f(x); subclasses give `_f(x)` and `_df(x, y, g)` (the gradient given gradOutput g)."""

    def updateOutput(self, input):
        self.output = reuse(self.output, self._f(input))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, self._df(input, self.output, gradOutput))
        return self.gradInput


class Tanh(_Pointwise):
    """y = tanh(x).

    >>> from flambeau.legacy import nn
    >>> nn.Tanh().forward(flambeau.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7616])
    """

    def _f(self, x):
        return flambeau.tanh(x)

    def _df(self, x, y, g):
        return g * (1 - y * y)


class Sigmoid(_Pointwise):
    """y = 1 / (1 + exp(-x)).

    >>> from flambeau.legacy import nn
    >>> nn.Sigmoid().forward(flambeau.tensor([0.0, 2.0]))
    tensor([0.5000, 0.8808])
    """

    def _f(self, x):
        return flambeau.sigmoid(x)

    def _df(self, x, y, g):
        return g * y * (1 - y)


class Threshold(Module):
    """y = x where x > threshold, else `val`; with inplace=True the input is overwritten.

    >>> from flambeau.legacy import nn
    >>> nn.Threshold(1, -1).forward(flambeau.tensor([0.5, 2.0]))  # x if x > 1 else -1
    tensor([-1.,  2.])
    """

    def __init__(self, th=1e-6, v=0, ip=False):
        super().__init__()
        self.threshold, self.val, self.inplace = th, v, ip
        if ip and v > th:
            raise ValueError("in-place Threshold needs val <= threshold")

    def updateOutput(self, input):
        if self.inplace:
            self.output = flambeau.threshold_(input, self.threshold, self.val)
        else:
            out = flambeau.threshold(input, self.threshold, self.val)
            self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        # After an in-place forward the input holds y; y > th exactly where x > th.
        src = self.output if self.inplace else input
        gi = flambeau.threshold_backward(gradOutput, src, self.threshold)
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput

    def __repr__(self):
        return f"nn.{type(self).__name__}"


class ReLU(Threshold):
    """y = max(0, x); with ip=True the input is overwritten.

    >>> from flambeau.legacy import nn
    >>> nn.ReLU().forward(flambeau.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, ip=False):
        super().__init__(0, 0, ip)


class HardTanh(Module):
    """Clamps to [min_val, max_val]; gradient 1 strictly inside.

    >>> from flambeau.legacy import nn
    >>> nn.HardTanh().forward(flambeau.tensor([-2.0, 0.5, 2.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """

    def __init__(self, min_value=-1, max_value=1, inplace=False):
        super().__init__()
        if max_value <= min_value:
            raise ValueError("HardTanh: max_value must be larger than min_value")
        self.min_val, self.max_val, self.inplace = min_value, max_value, inplace

    def updateOutput(self, input):
        if self.inplace:
            self.output = input.clamp_(self.min_val, self.max_val)
        else:
            self.output = reuse(self.output, flambeau.hardtanh(input, self.min_val, self.max_val))
        return self.output

    def updateGradInput(self, input, gradOutput):
        src = self.output if self.inplace else input
        gi = flambeau.hardtanh_backward(gradOutput, src, self.min_val, self.max_val)
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput


class ReLU6(HardTanh):
    """y = min(max(0, x), 6).

    >>> from flambeau.legacy import nn
    >>> nn.ReLU6().forward(flambeau.tensor([-1.0, 2.0, 8.0]))
    tensor([0., 2., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__(0, 6, inplace)


class Clamp(HardTanh):
    """Clamps every element to [min_value, max_value].

    >>> from flambeau.legacy import nn
    >>> nn.Clamp(0, 1).forward(flambeau.tensor([-1.0, 0.5, 2.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """

    def __init__(self, min_value, max_value):
        super().__init__(min_value, max_value)

    def __repr__(self):
        return f"nn.Clamp({self.min_val}, {self.max_val})"


class LeakyReLU(Module):
    """y = x for x > 0, negval·x otherwise.

    >>> from flambeau.legacy import nn
    >>> nn.LeakyReLU(0.1).forward(flambeau.tensor([-1.0, 2.0]))
    tensor([-0.1000,  2.0000])
    """

    def __init__(self, negval=1 / 100, ip=False):
        super().__init__()
        self.negval, self.inplace = negval, ip

    def updateOutput(self, input):
        out = flambeau.leaky_relu(input, self.negval)
        self.output = input.copy_(out) if self.inplace else reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        src = self.output if self.inplace else input
        gi = flambeau.leaky_relu_backward(gradOutput, src, self.negval, self.inplace)
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput


class ELU(Module):
    """y = x for x > 0, alpha·(exp(x) - 1) otherwise.

    >>> from flambeau.legacy import nn
    >>> nn.ELU().forward(flambeau.tensor([-1.0, 0.0, 2.0]))
    tensor([-0.6321,  0.0000,  2.0000])
    """

    def __init__(self, alpha=1, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def updateOutput(self, input):
        out = flambeau.elu(input, self.alpha)
        self.output = input.copy_(out) if self.inplace else reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        if self.inplace:
            gi = flambeau.elu_backward(gradOutput, self.alpha, 1, 1, True, self.output)
        else:
            gi = flambeau.elu_backward(gradOutput, self.alpha, 1, 1, False, input)
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput


class PReLU(Module):
    """Leaky ReLU with learnt slopes: one shared (nOutputPlane=0) or one per channel
    (dim 1 of a batch, dim 0 of a single sample). Slopes start at 0.25.

    >>> from flambeau.legacy import nn
    >>> nn.PReLU().forward(flambeau.tensor([-1.0, 2.0]))  # slope starts at 0.25
    tensor([-0.2500,  2.0000])
    """

    def __init__(self, nOutputPlane=0):
        super().__init__()
        self.nOutputPlane = nOutputPlane
        n = max(nOutputPlane, 1)
        self.weight = flambeau.full((n,), 0.25)
        self.gradWeight = flambeau.zeros(n)

    def reset(self, stdv=None):
        self.weight.fill_(0.25)
        return self

    def _slopes(self, x):
        if self.nOutputPlane == 0:
            return self.weight.view([1] * x.dim()) if x.dim() else self.weight.view([])
        dim = 0 if x.dim() in (1, 3) else 1  # channel dimension, as Torch7 chooses it
        shape = [1] * x.dim()
        shape[dim] = self.nOutputPlane
        return self.weight.view(shape)

    def updateOutput(self, input):
        w = self._slopes(input)
        out = flambeau.where(input > 0, input, input * w)
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        w = self._slopes(input)
        gi = flambeau.where(input > 0, gradOutput, gradOutput * w)
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        contrib = gradOutput * flambeau.clamp_max(input, 0)
        if self.nOutputPlane == 0:
            self.gradWeight.add_(contrib.sum().reshape(1), alpha=scale)
        else:
            dim = 0 if input.dim() in (1, 3) else 1
            dims = [d for d in range(input.dim()) if d != dim]
            total = contrib.sum(dims) if dims else contrib
            self.gradWeight.add_(total, alpha=scale)


class RReLU(Module):
    """Randomised leaky ReLU: slopes drawn from U(lower, upper) in training, their mean in
    evaluation.

    >>> from flambeau.legacy import nn
    >>> m = nn.RReLU()
    >>> m.evaluate()  # slope (1/8 + 1/3) / 2
    >>> m.forward(flambeau.tensor([-1.0, 2.0]))
    tensor([-0.2292,  2.0000])
    """

    def __init__(self, l=1 / 8, u=1 / 3, ip=False):  # noqa: E741 - Torch7's argument names
        super().__init__()
        self.lower, self.upper, self.inplace = l, u, ip
        self.noise = flambeau.empty(0)
        self._buffers = ("noise",)

    def updateOutput(self, input):
        if self.train:
            noise = flambeau.empty_like(input).uniform_(self.lower, self.upper)
            self.noise = flambeau.where(input >= 0, flambeau.ones_like(input), noise)
        else:
            slope = (self.lower + self.upper) / 2
            self.noise = flambeau.where(
                input >= 0, flambeau.ones_like(input), flambeau.full_like(input, slope)
            )
        out = input * self.noise
        self.output = input.copy_(out) if self.inplace else reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput * self.noise)
        return self.gradInput

    def __repr__(self):
        return f"nn.RReLU ({self.lower:.4f}, {self.upper:.4f})"


class HardShrink(_Pointwise):
    """y = x where |x| > lam, else 0.

    >>> from flambeau.legacy import nn
    >>> nn.HardShrink(0.5).forward(flambeau.tensor([-1.0, 0.25, 2.0]))
    tensor([-1.,  0.,  2.])
    """

    def __init__(self, lam=0.5):
        super().__init__()
        self.lambd = lam

    def _f(self, x):
        return flambeau.hardshrink(x, self.lambd)

    def _df(self, x, y, g):
        return flambeau.hardshrink_backward(g, x, self.lambd)


class SoftShrink(_Pointwise):
    """y = x - lam·sign(x) where |x| > lam, else 0.

    >>> from flambeau.legacy import nn
    >>> nn.SoftShrink(0.5).forward(flambeau.tensor([-1.0, 0.25, 2.0]))
    tensor([-0.5000,  0.0000,  1.5000])
    """

    def __init__(self, lam=0.5):
        super().__init__()
        self.lambd = lam

    def _f(self, x):
        return flambeau.softshrink(x, self.lambd)

    def _df(self, x, y, g):
        return flambeau.softshrink_backward(g, x, self.lambd)


def _softmax_dim(x):
    # Torch7: a vector or a (C, H, W) image normalises dim 0; batches of those dim 1.
    if x.dim() not in (1, 2, 3, 4):
        raise ValueError(f"expected a 1-D to 4-D input, got {x.dim()}-D")
    return 0 if x.dim() in (1, 3) else 1


class SoftMax(_Pointwise):
    """exp(x_i) / Σ_j exp(x_j) over the features: dim 0 of a vector or a (C, H, W)
    image, dim 1 of a batch of those.

    >>> from flambeau.legacy import nn
    >>> nn.SoftMax().forward(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([0.0900, 0.2447, 0.6652])
    """

    def _f(self, x):
        return flambeau.softmax(x, _softmax_dim(x))

    def _df(self, x, y, g):
        return flambeau._softmax_backward_data(g.contiguous(), y, _softmax_dim(x), x.dtype)


class SpatialSoftMax(SoftMax):
    """Softmax over the feature planes at every spatial position.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[[0.0, 1.0]], [[0.0, 3.0]]])  # (C, H, W) = (2, 1, 2)
    >>> nn.SpatialSoftMax().forward(x).squeeze(1)
    tensor([[0.5000, 0.1192],
            [0.5000, 0.8808]])
    """


class LogSoftMax(_Pointwise):
    """The log of SoftMax, over the same dimension.

    >>> from flambeau.legacy import nn
    >>> nn.LogSoftMax().forward(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([-2.4076, -1.4076, -0.4076])
    """

    def _f(self, x):
        return flambeau.log_softmax(x, _softmax_dim(x))

    def _df(self, x, y, g):
        return flambeau._log_softmax_backward_data(g.contiguous(), y, _softmax_dim(x), x.dtype)


class SoftMin(_Pointwise):
    """SoftMax of -x.

    >>> from flambeau.legacy import nn
    >>> nn.SoftMin().forward(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([0.6652, 0.2447, 0.0900])
    """

    def _f(self, x):
        return flambeau.softmax(-x, _softmax_dim(x))

    def _df(self, x, y, g):
        return -flambeau._softmax_backward_data(g.contiguous(), y, _softmax_dim(x), x.dtype)


class SoftPlus(_Pointwise):
    """log(1 + exp(beta·x)) / beta, linear above `threshold`.

    >>> from flambeau.legacy import nn
    >>> nn.SoftPlus().forward(flambeau.tensor([-1.0, 0.0, 2.0]))
    tensor([0.3133, 0.6931, 2.1269])
    """

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def _f(self, x):
        return flambeau.softplus(x, self.beta, self.threshold)

    def _df(self, x, y, g):
        return flambeau.softplus_backward(g, x, self.beta, self.threshold)


class SoftSign(_Pointwise):
    """y = x / (1 + |x|).

    >>> from flambeau.legacy import nn
    >>> nn.SoftSign().forward(flambeau.tensor([-1.0, 0.0, 3.0]))
    tensor([-0.5000,  0.0000,  0.7500])
    """

    def _f(self, x):
        return x / (1 + x.abs())

    def _df(self, x, y, g):
        d = 1 + x.abs()
        return g / (d * d)


class LogSigmoid(_Pointwise):
    """y = log(1 / (1 + exp(-x))).

    >>> from flambeau.legacy import nn
    >>> nn.LogSigmoid().forward(flambeau.tensor([0.0, 2.0]))
    tensor([-0.6931, -0.1269])
    """

    def _f(self, x):
        return flambeau.log_sigmoid(x)

    def _df(self, x, y, g):
        return flambeau.log_sigmoid_backward(g, x)


class TanhShrink(_Pointwise):
    """y = x - tanh(x).

    >>> from flambeau.legacy import nn
    >>> nn.TanhShrink().forward(flambeau.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """

    def _f(self, x):
        return x - flambeau.tanh(x)

    def _df(self, x, y, g):
        t = flambeau.tanh(x)
        return g * t * t


class Abs(_Pointwise):
    """y = |x|.

    >>> from flambeau.legacy import nn
    >>> nn.Abs().forward(flambeau.tensor([-1.5, 0.0, 2.0]))
    tensor([1.5000, 0.0000, 2.0000])
    """

    def _f(self, x):
        return x.abs()

    def _df(self, x, y, g):
        return g * x.sign()


class Square(_Pointwise):
    """y = x².

    >>> from flambeau.legacy import nn
    >>> nn.Square().forward(flambeau.tensor([-2.0, 3.0]))
    tensor([4., 9.])
    """

    def _f(self, x):
        return x * x

    def _df(self, x, y, g):
        return 2 * x * g


class Sqrt(_Pointwise):
    """y = sqrt(x + eps); the gradient is 0 where y is 0 (as Torch7).

    >>> from flambeau.legacy import nn
    >>> nn.Sqrt().forward(flambeau.tensor([4.0, 9.0]))
    tensor([2., 3.])
    """

    def __init__(self, b=0, eps=None):
        super().__init__()
        self.eps = b if eps is None else eps

    def _f(self, x):
        return flambeau.sqrt(x + self.eps)

    def _df(self, x, y, g):
        return flambeau.where(y == 0, flambeau.zeros_like(y), g / (2 * y))


class Power(_Pointwise):
    """y = x^p.

    >>> from flambeau.legacy import nn
    >>> nn.Power(2).forward(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([1., 4., 9.])
    """

    def __init__(self, p):
        super().__init__()
        self.pow = p

    def _f(self, x):
        return flambeau.pow(x, self.pow)

    def _df(self, x, y, g):
        return g * self.pow * flambeau.pow(x, self.pow - 1)


class Exp(_Pointwise):
    """y = exp(x).

    >>> from flambeau.legacy import nn
    >>> nn.Exp().forward(flambeau.tensor([0.0, 1.0]))
    tensor([1.0000, 2.7183])
    """

    def _f(self, x):
        return flambeau.exp(x)

    def _df(self, x, y, g):
        return g * y


class Log(_Pointwise):
    """y = log(x).

    >>> from flambeau.legacy import nn
    >>> nn.Log().forward(flambeau.tensor([1.0, 4.0]))
    tensor([0.0000, 1.3863])
    """

    def _f(self, x):
        return flambeau.log(x)

    def _df(self, x, y, g):
        return g / x
