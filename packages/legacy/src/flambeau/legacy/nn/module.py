"""The Torch7 `nn.Module` contract: explicit updateOutput / updateGradInput / accGradParameters."""

from __future__ import annotations

import math

import flambeau

# Torch7 type names (and flambeau's spelling of them) to dtypes.
_TYPES = {
    "torch.FloatTensor": flambeau.float32,
    "torch.DoubleTensor": flambeau.float64,
    "torch.HalfTensor": flambeau.float16,
}
_NAMES = {v: k for k, v in _TYPES.items()}


def _dtype_of(name):
    if isinstance(name, flambeau.dtype):
        return name
    key = name.replace("flambeau.", "torch.")
    if key not in _TYPES:
        raise ValueError(f"unknown tensor type {name!r}; expected one of {sorted(_TYPES)}")
    return _TYPES[key]


def _convert(obj, dtype, cache):
    """Convert floating tensors inside obj (tensor, list, tuple, dict, Module) to dtype."""
    if isinstance(obj, flambeau.Tensor):
        if not obj.is_floating_point() or obj.dtype == dtype:
            return obj
        key = id(obj)
        if key not in cache:
            cache[key] = obj.to(dtype)
        return cache[key]
    if isinstance(obj, Module):
        obj.type(dtype, cache)
        return obj
    if isinstance(obj, list):
        return [_convert(o, dtype, cache) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_convert(o, dtype, cache) for o in obj)
    if isinstance(obj, dict):
        return {k: _convert(v, dtype, cache) for k, v in obj.items()}
    return obj


def reuse(buffer, value):
    """Write value into buffer (resized in place) so the state tensor keeps its identity.

    Torch7 modules own their `output`/`gradInput` and overwrite them on every call;
    a buffer of another dtype (or a non-tensor such as a table) is replaced instead.
    """
    if (
        isinstance(buffer, flambeau.Tensor)
        and isinstance(value, flambeau.Tensor)
        and buffer.dtype == value.dtype
        and buffer is not value
        and not buffer._is_view_of(value)
    ):
        if buffer.shape != value.shape:
            buffer.resize_(value.shape)
        buffer.copy_(value)
        return buffer
    return value


class Module:
    """Base class of every legacy module (Torch7's `nn.Module`).

    >>> from flambeau.legacy import nn
    >>> class Double(nn.Module):
    ...     def updateOutput(self, input):
    ...         self.output = input * 2
    ...         return self.output
    >>> Double().forward(flambeau.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    def __init__(self):
        self.gradInput = flambeau.empty(0)
        self.output = flambeau.empty(0)
        self.train = True

    # -- the three computations --------------------------------------------------
    def updateOutput(self, input):
        return self.output

    def forward(self, input):
        return self.updateOutput(input)

    def updateGradInput(self, input, gradOutput):
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        pass

    def backward(self, input, gradOutput, scale=1):
        self.updateGradInput(input, gradOutput)
        self.accGradParameters(input, gradOutput, scale)
        return self.gradInput

    def backwardUpdate(self, input, gradOutput, lr):
        self.updateGradInput(input, gradOutput)
        self.accUpdateGradParameters(input, gradOutput, lr)
        return self.gradInput

    def accUpdateGradParameters(self, input, gradOutput, lr):
        # Accumulate straight into the parameters: alias each gradient to its parameter.
        names = [
            n for n in self._param_names() if getattr(self, "grad" + _cap(n), None) is not None
        ]
        saved = {n: getattr(self, "grad" + _cap(n)) for n in names}
        for n in names:
            setattr(self, "grad" + _cap(n), getattr(self, n))
        try:
            self.accGradParameters(input, gradOutput, -lr)
        finally:
            for n, g in saved.items():
                setattr(self, "grad" + _cap(n), g)

    def sharedAccUpdateGradParameters(self, input, gradOutput, lr):
        if self.parameters():
            self.zeroGradParameters()
            self.accGradParameters(input, gradOutput, 1)
            self.updateParameters(lr)

    # -- parameters ----------------------------------------------------------------
    def _param_names(self):
        return [n for n in ("weight", "bias") if getattr(self, n, None) is not None]

    def parameters(self):
        """`([params], [gradParams])` in matching order, or None when there are none."""
        names = self._param_names()
        params = [getattr(self, n) for n in names]
        grads = [getattr(self, "grad" + _cap(n)) for n in names]
        if not params:
            return None
        return params, grads

    def zeroGradParameters(self):
        p = self.parameters()
        if p is not None:
            for g in p[1]:
                g.zero_()

    def updateParameters(self, learningRate):
        p = self.parameters()
        if p is not None:
            for w, g in zip(*p):
                w.add_(g, alpha=-learningRate)

    def flattenParameters(self):
        """Torch7's getParameters(): one flat tensor of parameters and one of gradients.

        Every parameter and gradient becomes a view into the flat tensors (tensors
        that shared storage keep sharing), so updating the flat tensor trains the net.
        """
        p = self.parameters()
        if p is None:
            return flambeau.empty(0), flambeau.empty(0)
        return _flatten(p[0]), _flatten(p[1])

    getParameters = flattenParameters

    # -- modes, types, state ---------------------------------------------------------
    def training(self):
        self.train = True

    def evaluate(self):
        self.train = False

    def type(self, type=None, tensorCache=None):
        if type is None:
            return _NAMES.get(self.output.dtype, str(self.output.dtype))
        dtype = _dtype_of(type)
        cache = {} if tensorCache is None else tensorCache
        for key, value in list(vars(self).items()):
            setattr(self, key, _convert(value, dtype, cache))
        return self

    def float(self, *args):
        return self.type("torch.FloatTensor", *args)

    def double(self, *args):
        return self.type("torch.DoubleTensor", *args)

    def half(self, *args):
        return self.type("torch.HalfTensor", *args)

    def reset(self, stdv=None):
        pass

    def clearState(self):
        """Empty output, gradInput and the listed work buffers (Torch7's nn.utils.clear)."""
        for name in ("output", "gradInput") + tuple(getattr(self, "_buffers", ())):
            value = getattr(self, name, None)
            if isinstance(value, flambeau.Tensor):
                setattr(self, name, value.new_empty(0))
            elif isinstance(value, list):
                setattr(self, name, [])
        return self

    # -- tree utilities ----------------------------------------------------------------
    def apply(self, callback):
        callback(self)
        for m in getattr(self, "modules", None) or []:
            m.apply(callback)

    def listModules(self):
        out = [self]
        for m in getattr(self, "modules", None) or []:
            out.extend(m.listModules())
        return out

    def findModules(self, typename, container=None):
        """`(nodes, containers)`: every module of that class name (or class) in the tree."""
        nodes, containers = [], []
        matches = (
            (lambda m: type(m).__name__ == typename)
            if isinstance(typename, str)
            else (lambda m: isinstance(m, typename))
        )
        if matches(self):
            nodes.append(self)
            containers.append(container)
        for child in getattr(self, "modules", None) or []:
            n, c = child.findModules(typename, self)
            nodes.extend(n)
            containers.extend(c)
        return nodes, containers

    def replace(self, callback):
        out = callback(self)
        if getattr(self, "modules", None):
            self.modules = [m.replace(callback) for m in self.modules]
        return out

    def clone(self):
        import copy

        return copy.deepcopy(self)

    def __call__(self, input=None, gradOutput=None):
        self.forward(input)
        if gradOutput is not None:
            self.backward(input, gradOutput)
            return self.output, self.gradInput
        return self.output

    def __repr__(self):
        return "nn." + type(self).__name__


def _cap(name):
    return name[0].upper() + name[1:]


def _flatten(tensors):
    """Copy tensors into one contiguous tensor and re-point each of them into it."""
    tensors = [t for t in tensors if t is not None]
    if not tensors:
        return flambeau.empty(0)
    dtype = tensors[0].dtype
    # Tensors seen twice (shared modules) are placed once.
    seen, unique = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            unique.append(t)
    total = sum(t.numel() for t in unique)
    flat = flambeau.zeros(total, dtype=dtype)
    offset = 0
    for t in unique:
        n = t.numel()
        flat[offset : offset + n].copy_(t.reshape(-1).to(dtype))
        # Contiguous strides: the flat tensor holds the values in row-major order.
        t.set_(flat, offset, tuple(t.shape))
        offset += n
    return flat


def uniform_(tensor, stdv):
    if tensor is not None:
        tensor.uniform_(-stdv, stdv)


def default_stdv(stdv, fan_in):
    """Torch7's reset(): uniform(±1/sqrt(fan_in)), or ±stdv·sqrt(3) when stdv is given."""
    if stdv is not None:
        return stdv * math.sqrt(3)
    return 1.0 / math.sqrt(fan_in)
