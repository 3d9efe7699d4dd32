"""Linear maps with parameters: Linear, Bilinear, LookupTable."""

from __future__ import annotations

import flambeau

from .module import Module, default_stdv, reuse, uniform_


class Linear(Module):
    """y = W x + b for a 1-D input or each row of a 2-D batch; `weight` is (out, in).

    >>> from flambeau.legacy import nn
    >>> m = nn.Linear(2, 1)
    >>> _ = m.weight.fill_(1.0), m.bias.fill_(0.5)
    >>> m.forward(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[3.5000],
            [7.5000]])
    """

    def __init__(self, inputSize, outputSize, bias=True):
        super().__init__()
        self.weight = flambeau.empty(outputSize, inputSize)
        self.gradWeight = flambeau.zeros(outputSize, inputSize)
        self.bias = flambeau.empty(outputSize) if bias else None
        self.gradBias = flambeau.zeros(outputSize) if bias else None
        self.reset()

    def noBias(self):
        self.bias = None
        self.gradBias = None
        return self

    def reset(self, stdv=None):
        stdv = default_stdv(stdv, self.weight.shape[1])
        uniform_(self.weight, stdv)
        uniform_(self.bias, stdv)
        return self

    def _check(self, input):
        if input.dim() not in (1, 2):
            raise ValueError(f"Linear expects a 1-D or 2-D input, got {input.dim()}-D")

    def updateOutput(self, input):
        self._check(input)
        if input.dim() == 1:
            out = flambeau.mv(self.weight, input)
        else:
            out = flambeau.mm(input, self.weight.t())
        if self.bias is not None:
            out.add_(self.bias)
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self._check(input)
        if input.dim() == 1:
            grad = flambeau.mv(self.weight.t(), gradOutput)
        else:
            grad = flambeau.mm(gradOutput, self.weight)
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        self._check(input)
        if input.dim() == 1:
            self.gradWeight.addr_(gradOutput, input, alpha=scale)
            if self.bias is not None:
                self.gradBias.add_(gradOutput, alpha=scale)
        else:
            self.gradWeight.addmm_(gradOutput.t(), input, alpha=scale)
            if self.bias is not None:
                self.gradBias.add_(gradOutput.sum(0), alpha=scale)

    def __repr__(self):
        out = f"nn.Linear({self.weight.shape[1]} -> {self.weight.shape[0]})"
        return out if self.bias is not None else out + " without bias"


class Bilinear(Module):
    """y_k = x1ᵀ W_k x2 + b_k on a table {x1 (N, in1), x2 (N, in2)}; weight is (out, in1, in2).

    >>> from flambeau.legacy import nn
    >>> m = nn.Bilinear(2, 2, 1)
    >>> _ = m.weight.copy_(flambeau.eye(2).unsqueeze(0)), m.bias.zero_()  # y = x1 . x2
    >>> m.forward([flambeau.tensor([[1.0, 2.0]]), flambeau.tensor([[3.0, 4.0]])])
    tensor([[11.]])
    """

    def __init__(self, inputSize1, inputSize2, outputSize, bias=True):
        super().__init__()
        self.weight = flambeau.empty(outputSize, inputSize1, inputSize2)
        self.gradWeight = flambeau.zeros(outputSize, inputSize1, inputSize2)
        self.bias = flambeau.empty(outputSize) if bias else None
        self.gradBias = flambeau.zeros(outputSize) if bias else None
        self.gradInput = [flambeau.empty(0), flambeau.empty(0)]
        self.reset()

    def reset(self, stdv=None):
        stdv = default_stdv(stdv, self.weight.shape[1])
        uniform_(self.weight, stdv)
        uniform_(self.bias, stdv)
        return self

    def _check(self, input):
        if len(input) != 2 or input[0].dim() != 2 or input[1].dim() != 2:
            raise ValueError("Bilinear expects a table of two 2-D tensors (batch, features)")
        if input[0].shape[0] != input[1].shape[0]:
            raise ValueError("Bilinear: the two inputs must have the same batch size")

    def updateOutput(self, input):
        self._check(input)
        out = flambeau.einsum("ni,kij,nj->nk", input[0], self.weight, input[1])
        if self.bias is not None:
            out.add_(self.bias)
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self._check(input)
        g1 = flambeau.einsum("nk,kij,nj->ni", gradOutput, self.weight, input[1])
        g2 = flambeau.einsum("nk,kij,ni->nj", gradOutput, self.weight, input[0])
        self.gradInput = [reuse(self.gradInput[0], g1), reuse(self.gradInput[1], g2)]
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        gw = flambeau.einsum("nk,ni,nj->kij", gradOutput, input[0], input[1])
        self.gradWeight.add_(gw, alpha=scale)
        if self.bias is not None:
            self.gradBias.add_(gradOutput.sum(0), alpha=scale)

    def __repr__(self):
        k, i, j = self.weight.shape
        out = f"nn.Bilinear(({i} x {j}) -> {k})"
        return out if self.bias is not None else out + " without bias"


class LookupTable(Module):
    """Rows of `weight` (nIndex, nOutput) picked by 0-based integer indices (1-D or 2-D input).

    >>> from flambeau.legacy import nn
    >>> m = nn.LookupTable(5, 2)
    >>> _ = m.weight.copy_(flambeau.arange(10.0).view(5, 2))
    >>> m.forward(flambeau.tensor([0, 3]))
    tensor([[0., 1.],
            [6., 7.]])
    """

    def __init__(self, nIndex, nOutput, paddingValue=None, maxNorm=None, normType=None):
        super().__init__()
        self.weight = flambeau.empty(nIndex, nOutput)
        self.gradWeight = flambeau.zeros(nIndex, nOutput)
        self.paddingValue = paddingValue
        self.maxNorm = maxNorm
        self.normType = normType if normType is not None else 2.0
        self.shouldScaleGradByFreq = False
        self.reset()

    def reset(self, stdv=1):
        self.weight.normal_(0, stdv)
        return self

    def scaleGradByFreq(self):
        self.shouldScaleGradByFreq = True
        return self

    def _check(self, input):
        if input.is_floating_point() or input.dtype == flambeau.bool:
            raise TypeError("LookupTable expects integer indices (e.g. a LongTensor)")
        if input.dim() not in (1, 2):
            raise ValueError("LookupTable expects a 1-D or 2-D tensor of indices")
        n = self.weight.shape[0]
        if input.numel() and (int(input.min()) < 0 or int(input.max()) >= n):
            raise IndexError(f"LookupTable: indices must lie in [0, {n})")

    def _renorm(self, idx):
        # Rescale the looked-up rows whose norm exceeds maxNorm (in place, as Torch7).
        rows = flambeau.unique(idx)
        w = self.weight.index_select(0, rows)
        norms = flambeau.linalg_vector_norm(w, self.normType, [1], True)
        factor = flambeau.where(
            norms > self.maxNorm, self.maxNorm / (norms + 1e-7), flambeau.ones_like(norms)
        )
        self.weight.index_copy_(0, rows, w * factor)

    def updateOutput(self, input):
        self._check(input)
        idx = input.reshape(-1).long()
        if self.maxNorm is not None:
            self._renorm(idx)
        out = self.weight.index_select(0, idx).view(*input.shape, self.weight.shape[1])
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        # Indices have no gradient; Torch7 returns zeros of the input's shape.
        self.gradInput = reuse(self.gradInput, flambeau.zeros(input.shape))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        idx = input.reshape(-1).long()
        g = gradOutput.reshape(-1, self.weight.shape[1])
        pad = -1 if self.paddingValue is None else self.paddingValue
        gw = flambeau.embedding_dense_backward(
            g, idx, self.weight.shape[0], pad, self.shouldScaleGradByFreq
        )
        self.gradWeight.add_(gw, alpha=scale)

    def __repr__(self):
        return f"nn.LookupTable({self.weight.shape[0]}, {self.weight.shape[1]})"
