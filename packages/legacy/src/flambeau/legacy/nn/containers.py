"""Containers: Sequential, Concat, ConcatTable, ParallelTable, Parallel."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


def _indent(text, prefix):
    return text.replace("\n", "\n" + prefix)


class Container(Module):
    """A module made of child modules (`self.modules`, a 0-based list).

    >>> from flambeau.legacy import nn
    >>> c = nn.Container(nn.Linear(2, 2), nn.ReLU())
    >>> c.size(), c.get(1)
    (2, nn.ReLU)
    """

    def __init__(self, *modules):
        super().__init__()
        self.modules = []
        for m in modules:
            self.add(m)

    def add(self, module):
        self.modules.append(module)
        return self

    def get(self, index):
        return self.modules[index]

    def size(self):
        return len(self.modules)

    def __len__(self):
        return len(self.modules)

    def __getitem__(self, index):
        return self.modules[index]

    def zeroGradParameters(self):
        for m in self.modules:
            m.zeroGradParameters()

    def updateParameters(self, learningRate):
        for m in self.modules:
            m.updateParameters(learningRate)

    def training(self):
        super().training()
        for m in self.modules:
            m.training()

    def evaluate(self):
        super().evaluate()
        for m in self.modules:
            m.evaluate()

    def reset(self, stdv=None):
        for m in self.modules:
            m.reset(stdv)

    def clearState(self):
        super().clearState()
        for m in self.modules:
            m.clearState()
        return self

    def parameters(self):
        params, grads = [], []
        for m in self.modules:
            p = m.parameters()
            if p is not None:
                params.extend(p[0])
                grads.extend(p[1])
        return (params, grads) if params else None

    def accUpdateGradParameters(self, input, gradOutput, lr):
        # Generic fallback: step with this call's gradients, leaving the stored ones as they were.
        p = self.parameters()
        if p is None:
            return
        saved = [g.clone() for g in p[1]]
        for g in p[1]:
            g.zero_()
        self.accGradParameters(input, gradOutput, 1)
        for w, g, s in zip(p[0], p[1], saved):
            w.add_(g, alpha=-lr)
            g.copy_(s)


class Sequential(Container):
    """Chains its children: output of child i is the input of child i+1.

    >>> from flambeau.legacy import nn
    >>> net = nn.Sequential().add(nn.Linear(3, 2)).add(nn.Tanh())
    >>> net.forward(flambeau.ones(4, 3)).shape
    flambeau.Size([4, 2])
    >>> net
    nn.Sequential {
      [input -> (0) -> (1) -> output]
      (0): nn.Linear(3 -> 2)
      (1): nn.Tanh
    }
    """

    def add(self, module):
        if not self.modules:
            self.gradInput = module.gradInput
        self.modules.append(module)
        self.output = module.output
        return self

    def insert(self, module, index=None):
        index = len(self.modules) if index is None else index
        if index < 0:
            index += len(self.modules) + 1
        if not 0 <= index <= len(self.modules):
            raise IndexError(f"index {index} out of range for {len(self.modules)} modules")
        self.modules.insert(index, module)
        self.output = self.modules[-1].output
        self.gradInput = self.modules[0].gradInput
        return self

    def remove(self, index=-1):
        if not -len(self.modules) <= index < len(self.modules):
            raise IndexError(f"index {index} out of range for {len(self.modules)} modules")
        del self.modules[index]
        if self.modules:
            self.output = self.modules[-1].output
            self.gradInput = self.modules[0].gradInput
        else:
            self.output = flambeau.empty(0)
            self.gradInput = flambeau.empty(0)
        return self

    def updateOutput(self, input):
        current = input
        for m in self.modules:
            current = m.updateOutput(current)
        self.output = current
        return current

    def _walk_back(self, input, gradOutput, step):
        # Child i saw modules[i-1].output as its input; the first child saw `input`.
        current = gradOutput
        for i in range(len(self.modules) - 1, -1, -1):
            child_input = self.modules[i - 1].output if i > 0 else input
            current = step(self.modules[i], child_input, current)
        return current

    def updateGradInput(self, input, gradOutput):
        self.gradInput = self._walk_back(input, gradOutput, lambda m, x, g: m.updateGradInput(x, g))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        def step(m, x, g):
            m.accGradParameters(x, g, scale)
            return m.gradInput

        self._walk_back(input, gradOutput, step)

    def backward(self, input, gradOutput, scale=1):
        self.gradInput = self._walk_back(input, gradOutput, lambda m, x, g: m.backward(x, g, scale))
        return self.gradInput

    def accUpdateGradParameters(self, input, gradOutput, lr):
        def step(m, x, g):
            m.accUpdateGradParameters(x, g, lr)
            return m.gradInput

        self._walk_back(input, gradOutput, step)

    def __repr__(self):
        tab = "  "
        chain = " -> ".join(f"({i})" for i in range(len(self.modules)))
        head = "nn.Sequential {\n" + tab + "[input -> " + (chain + " -> " if chain else "")
        head += "output]"
        for i, m in enumerate(self.modules):
            head += f"\n{tab}({i}): " + _indent(repr(m), tab)
        return head + "\n}"


def _branches_repr(name, modules, last_branch="|`-> "):
    tab, line, nxt, ext = "  ", "\n", "  |`-> ", "  |    "
    out = f"nn.{name} {{" + line + tab + "input"
    for i, m in enumerate(modules):
        if i == len(modules) - 1:
            out += line + tab + "  `-> " + f"({i}): " + _indent(repr(m), tab + "       ")
        else:
            out += line + nxt + f"({i}): " + _indent(repr(m), ext)
    out += line + tab + "... -> output" + line + "}"
    return out


class ConcatTable(Container):
    """Applies every child to the same input; output is the list of their outputs.

    >>> from flambeau.legacy import nn
    >>> m = nn.ConcatTable(nn.Identity(), nn.MulConstant(2))
    >>> m.forward(flambeau.tensor([1.0, 2.0]))
    [tensor([1., 2.]), tensor([2., 4.])]
    """

    def __init__(self, *modules):
        super().__init__(*modules)
        self.output = []

    def updateOutput(self, input):
        self.output = [m.updateOutput(input) for m in self.modules]
        return self.output

    def updateGradInput(self, input, gradOutput):
        grads = [m.updateGradInput(input, gradOutput[i]) for i, m in enumerate(self.modules)]
        self.gradInput = _sum_tables(self.gradInput, grads)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        for i, m in enumerate(self.modules):
            m.accGradParameters(input, gradOutput[i], scale)

    def backward(self, input, gradOutput, scale=1):
        grads = [m.backward(input, gradOutput[i], scale) for i, m in enumerate(self.modules)]
        self.gradInput = _sum_tables(self.gradInput, grads)
        return self.gradInput

    def accUpdateGradParameters(self, input, gradOutput, lr):
        for i, m in enumerate(self.modules):
            m.accUpdateGradParameters(input, gradOutput[i], lr)

    def __repr__(self):
        return _branches_repr("ConcatTable", self.modules)


def _sum_tables(buffer, grads):
    if isinstance(grads[0], flambeau.Tensor):
        total = grads[0].clone()
        for g in grads[1:]:
            total.add_(g)
        return reuse(buffer, total)
    return [_sum_tables(None, [g[i] for g in grads]) for i in range(len(grads[0]))]


class ParallelTable(Container):
    """Child i gets input[i]; output is the list of their outputs.

    >>> from flambeau.legacy import nn
    >>> m = nn.ParallelTable(nn.MulConstant(2), nn.AddConstant(1))
    >>> m.forward([flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0])])
    [tensor([2., 4.]), tensor([4.])]
    """

    def __init__(self, *modules):
        super().__init__(*modules)
        self.output = []
        self.gradInput = []

    def updateOutput(self, input):
        self.output = [m.updateOutput(input[i]) for i, m in enumerate(self.modules)]
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = [
            m.updateGradInput(input[i], gradOutput[i]) for i, m in enumerate(self.modules)
        ]
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        for i, m in enumerate(self.modules):
            m.accGradParameters(input[i], gradOutput[i], scale)

    def backward(self, input, gradOutput, scale=1):
        self.gradInput = [
            m.backward(input[i], gradOutput[i], scale) for i, m in enumerate(self.modules)
        ]
        return self.gradInput

    def accUpdateGradParameters(self, input, gradOutput, lr):
        for i, m in enumerate(self.modules):
            m.accUpdateGradParameters(input[i], gradOutput[i], lr)

    def __repr__(self):
        return _branches_repr("ParallelTable", self.modules)


class Concat(Container):
    """Applies every child to the same input and concatenates the outputs along `dimension`.

    >>> from flambeau.legacy import nn
    >>> m = nn.Concat(1, nn.Identity(), nn.MulConstant(2))
    >>> m.forward(flambeau.tensor([[1.0, 2.0]]))
    tensor([[1., 2., 2., 4.]])
    """

    def __init__(self, dimension, *modules):
        super().__init__(*modules)
        self.dimension = dimension
        self.outputSizes = []

    def updateOutput(self, input):
        outs = [m.updateOutput(input) for m in self.modules]
        self.outputSizes = [o.shape[self.dimension] for o in outs]
        self.output = reuse(self.output, flambeau.cat(outs, self.dimension))
        return self.output

    def _slices(self, gradOutput):
        offset = 0
        for i, m in enumerate(self.modules):
            n = self.outputSizes[i]
            yield m, gradOutput.narrow(self.dimension, offset, n)
            offset += n

    def updateGradInput(self, input, gradOutput):
        grads = [m.updateGradInput(input, g) for m, g in self._slices(gradOutput)]
        self.gradInput = _sum_tables(self.gradInput, grads)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        for m, g in self._slices(gradOutput):
            m.accGradParameters(input, g, scale)

    def backward(self, input, gradOutput, scale=1):
        grads = [m.backward(input, g, scale) for m, g in self._slices(gradOutput)]
        self.gradInput = _sum_tables(self.gradInput, grads)
        return self.gradInput

    def accUpdateGradParameters(self, input, gradOutput, lr):
        for m, g in self._slices(gradOutput):
            m.accUpdateGradParameters(input, g, lr)

    def __repr__(self):
        return _branches_repr("Concat", self.modules)


class Parallel(Container):
    """Child i gets input.select(inputDimension, i); outputs are concatenated on outputDimension.

    >>> from flambeau.legacy import nn
    >>> m = nn.Parallel(0, 0).add(nn.MulConstant(2)).add(nn.AddConstant(1))
    >>> m.forward(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([2., 4., 4., 5.])
    """

    def __init__(self, inputDimension, outputDimension):
        super().__init__()
        self.inputDimension = inputDimension
        self.outputDimension = outputDimension
        self.outputSizes = []

    def updateOutput(self, input):
        outs = [
            m.updateOutput(input.select(self.inputDimension, i)) for i, m in enumerate(self.modules)
        ]
        self.outputSizes = [o.shape[self.outputDimension] for o in outs]
        self.output = reuse(self.output, flambeau.cat(outs, self.outputDimension))
        return self.output

    def _pairs(self, input, gradOutput):
        offset = 0
        for i, m in enumerate(self.modules):
            n = self.outputSizes[i]
            yield (
                i,
                m,
                input.select(self.inputDimension, i),
                gradOutput.narrow(self.outputDimension, offset, n),
            )
            offset += n

    def _grad(self, input, gradOutput, call):
        grad = flambeau.zeros_like(input)
        for i, m, x, g in self._pairs(input, gradOutput):
            grad.select(self.inputDimension, i).copy_(call(m, x, g))
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput

    def updateGradInput(self, input, gradOutput):
        return self._grad(input, gradOutput, lambda m, x, g: m.updateGradInput(x, g))

    def backward(self, input, gradOutput, scale=1):
        return self._grad(input, gradOutput, lambda m, x, g: m.backward(x, g, scale))

    def accGradParameters(self, input, gradOutput, scale=1):
        for _, m, x, g in self._pairs(input, gradOutput):
            m.accGradParameters(x, g, scale)

    def accUpdateGradParameters(self, input, gradOutput, lr):
        for _, m, x, g in self._pairs(input, gradOutput):
            m.accUpdateGradParameters(x, g, lr)

    def __repr__(self):
        return _branches_repr("Parallel", self.modules)
