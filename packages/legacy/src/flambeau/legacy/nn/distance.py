"""Distances and products: Euclidean, Cosine, MM, MV."""

from __future__ import annotations

import flambeau

from .module import Module, default_stdv, reuse, uniform_


def _rows(module, x):
    if x.dim() == 1:
        return x.unsqueeze(0), True
    if x.dim() != 2:
        raise ValueError(f"{type(module).__name__} expects a 1-D or 2-D input, got {x.dim()}-D")
    return x, False


def _safe_div(num, den):
    # 0 where the denominator is 0: the distance is not differentiable there.
    return flambeau.where(den == 0, flambeau.zeros_like(num), num / den)


class Euclidean(Module):
    """y_j = ‖x - w_j‖ for the columns w_j of weight (inputSize, outputSize).

    >>> from flambeau.legacy import nn
    >>> m = nn.Euclidean(2, 2)
    >>> _ = m.weight.copy_(flambeau.tensor([[0.0, 3.0], [0.0, 0.0]]))  # columns (0, 0), (3, 0)
    >>> m.forward(flambeau.tensor([3.0, 4.0]))
    tensor([5., 4.])
    """

    def __init__(self, inputSize, outputSize):
        super().__init__()
        self.weight = flambeau.empty(inputSize, outputSize)
        self.gradWeight = flambeau.zeros(inputSize, outputSize)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.weight, default_stdv(stdv, self.weight.shape[0]))
        return self

    def updateOutput(self, input):
        x, single = _rows(self, input)
        diff = x.unsqueeze(2) - self.weight.unsqueeze(0)  # (N, in, out)
        out = flambeau.sqrt((diff * diff).sum(1))
        self.output = reuse(self.output, out.squeeze(0) if single else out)
        return self.output

    def _ratio(self, input, gradOutput):
        x, single = _rows(self, input)
        g = gradOutput.unsqueeze(0) if single else gradOutput
        y = self.output.unsqueeze(0) if single else self.output
        diff = x.unsqueeze(2) - self.weight.unsqueeze(0)
        return diff * _safe_div(g, y).unsqueeze(1), single  # (N, in, out)

    def updateGradInput(self, input, gradOutput):
        r, single = self._ratio(input, gradOutput)
        gi = r.sum(2)
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if single else gi)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        r, _ = self._ratio(input, gradOutput)
        self.gradWeight.sub_(r.sum(0), alpha=scale)

    def __repr__(self):
        return f"nn.Euclidean({self.weight.shape[0]} -> {self.weight.shape[1]})"


class Cosine(Module):
    """y_j = cos(x, w_j) for the rows w_j of weight (outputSize, inputSize).

    >>> from flambeau.legacy import nn
    >>> m = nn.Cosine(2, 2)
    >>> _ = m.weight.copy_(flambeau.tensor([[1.0, 0.0], [0.0, 1.0]]))
    >>> m.forward(flambeau.tensor([3.0, 4.0]))
    tensor([0.6000, 0.8000])
    """

    eps = 1e-12

    def __init__(self, inputSize, outputSize):
        super().__init__()
        self.weight = flambeau.empty(outputSize, inputSize)
        self.gradWeight = flambeau.zeros(outputSize, inputSize)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.weight, default_stdv(stdv, self.weight.shape[1]))
        return self

    def _parts(self, input):
        x, single = _rows(self, input)
        xn = flambeau.sqrt((x * x).sum(1, keepdim=True)) + self.eps  # (N, 1)
        wn = flambeau.sqrt((self.weight * self.weight).sum(1)) + self.eps  # (out,)
        return x, single, xn, wn

    def updateOutput(self, input):
        x, single, xn, wn = self._parts(input)
        out = flambeau.mm(x, self.weight.t()) / (xn * wn.unsqueeze(0))
        self.output = reuse(self.output, out.squeeze(0) if single else out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, single, xn, wn = self._parts(input)
        g = gradOutput.unsqueeze(0) if single else gradOutput
        y = flambeau.mm(x, self.weight.t()) / (xn * wn.unsqueeze(0))
        # d y_j / d x = w_j / (|x| |w_j|) - y_j x / |x|^2
        gi = flambeau.mm(g / wn.unsqueeze(0), self.weight) / xn
        gi.sub_(x * (g * y).sum(1, keepdim=True) / (xn * xn))
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if single else gi)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        x, single, xn, wn = self._parts(input)
        g = gradOutput.unsqueeze(0) if single else gradOutput
        y = flambeau.mm(x, self.weight.t()) / (xn * wn.unsqueeze(0))
        # d y_j / d w_j = x / (|x| |w_j|) - y_j w_j / |w_j|^2
        gw = flambeau.mm(g.t(), x / xn) / wn.unsqueeze(1)
        gw.sub_(self.weight * ((g * y).sum(0) / (wn * wn)).unsqueeze(1))
        self.gradWeight.add_(gw, alpha=scale)

    def __repr__(self):
        return f"nn.Cosine({self.weight.shape[1]} -> {self.weight.shape[0]})"


class MM(Module):
    """Matrix product of a table {A, B} (2-D, or 3-D batches), optionally transposing each.

    >>> from flambeau.legacy import nn
    >>> a, b = flambeau.tensor([[1.0, 2.0]]), flambeau.tensor([[3.0], [4.0]])
    >>> nn.MM().forward([a, b])
    tensor([[11.]])
    >>> nn.MM(transA=True, transB=True).forward([a, b])
    tensor([[3., 4.],
            [6., 8.]])
    """

    def __init__(self, transA=False, transB=False):
        super().__init__()
        self.transA, self.transB = transA, transB
        self.gradInput = [flambeau.empty(0), flambeau.empty(0)]

    @staticmethod
    def _t(m, flag):
        return m.transpose(-1, -2) if flag else m

    def _check(self, input):
        a, b = input
        if a.dim() != b.dim() or a.dim() not in (2, 3):
            raise ValueError("MM expects two 2-D matrices or two 3-D batches of matrices")

    def updateOutput(self, input):
        self._check(input)
        a, b = self._t(input[0], self.transA), self._t(input[1], self.transB)
        self.output = reuse(self.output, flambeau.matmul(a, b))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self._check(input)
        a, b = self._t(input[0], self.transA), self._t(input[1], self.transB)
        ga = flambeau.matmul(gradOutput, b.transpose(-1, -2))  # d/d(op(A))
        gb = flambeau.matmul(a.transpose(-1, -2), gradOutput)  # d/d(op(B))
        ga, gb = self._t(ga, self.transA), self._t(gb, self.transB)
        self.gradInput = [reuse(self.gradInput[0], ga), reuse(self.gradInput[1], gb)]
        return self.gradInput


class MV(Module):
    """Matrix-vector product of a table {M, v} (M 2-D and v 1-D, or batches of them).

    >>> from flambeau.legacy import nn
    >>> m, v = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]), flambeau.tensor([1.0, 1.0])
    >>> nn.MV().forward([m, v])
    tensor([3., 7.])
    """

    def __init__(self, trans=False):
        super().__init__()
        self.trans = trans
        self.gradInput = [flambeau.empty(0), flambeau.empty(0)]

    def _m(self, m):
        return m.transpose(-1, -2) if self.trans else m

    def updateOutput(self, input):
        m, v = input
        if not ((m.dim() == 2 and v.dim() == 1) or (m.dim() == 3 and v.dim() == 2)):
            raise ValueError("MV expects {2-D matrix, 1-D vector} or {3-D batch, 2-D batch}")
        out = flambeau.matmul(self._m(m), v.unsqueeze(-1)).squeeze(-1)
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        m, v = input
        gm = gradOutput.unsqueeze(-1) * v.unsqueeze(-2)  # d/d(op(M)): outer products
        if self.trans:
            gm = gm.transpose(-1, -2)
        gv = flambeau.matmul(self._m(m).transpose(-1, -2), gradOutput.unsqueeze(-1)).squeeze(-1)
        self.gradInput = [reuse(self.gradInput[0], gm), reuse(self.gradInput[1], gv)]
        return self.gradInput
