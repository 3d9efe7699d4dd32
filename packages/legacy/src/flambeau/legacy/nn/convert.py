"""Conversion of legacy modules to their flambeau.nn counterparts, weights included, so an
old model can be fine-tuned with autograd."""

from __future__ import annotations

import flambeau

from . import containers, convolution, dropout, linear, normalization, pooling, tables, transfer


def _nn():
    try:
        import flambeau.nn as nn
    except ImportError as e:  # pragma: no cover - depends on the installation
        from flambeau._siblings import install_hint

        raise ImportError(
            "converting legacy modules needs flambeau-nn, which is not installed. "
            f"{install_hint('flambeau-nn')}"
        ) from e
    return nn


def _copy(dst, src):
    if src is None:
        return
    with flambeau.no_grad():
        dst.copy_(src.reshape(dst.shape))


def _conv(nn, m, cls, kernel, stride, padding, **kw):
    out = cls(
        m.nInputPlane, m.nOutputPlane, kernel, stride=stride, padding=padding,
        bias=m.bias is not None, **kw,
    )  # fmt: skip
    out = out.to(m.weight.dtype)
    _copy(out.weight, m._kernel_weight())
    _copy(out.bias, m.bias)
    return out


def _linear(nn, m):
    out = nn.Linear(m.weight.shape[1], m.weight.shape[0], bias=m.bias is not None)
    out = out.to(m.weight.dtype)
    _copy(out.weight, m.weight)
    _copy(out.bias, m.bias)
    return out


def _spatial_conv(nn, m):
    if isinstance(m, convolution.SpatialFullConvolution):
        return _conv(
            nn, m, nn.ConvTranspose2d, (m.kH, m.kW), (m.dH, m.dW), (m.padH, m.padW),
            output_padding=(m.adjH, m.adjW),
        )  # fmt: skip
    dilation = tuple(m.dilation)
    return _conv(nn, m, nn.Conv2d, (m.kH, m.kW), (m.dH, m.dW), (m.padH, m.padW), dilation=dilation)


def _volumetric(nn, m):
    return _conv(nn, m, nn.Conv3d, (m.kT, m.kH, m.kW), (m.dT, m.dH, m.dW), (m.padT, m.padH, m.padW))


def _batchnorm(nn, m):
    cls = (
        nn.BatchNorm2d
        if isinstance(m, normalization.SpatialBatchNormalization)
        else (nn.BatchNorm1d)
    )
    n = m.running_mean.shape[0]
    out = cls(n, eps=m.eps, momentum=m.momentum, affine=m.affine).to(m.running_mean.dtype)
    _copy(out.running_mean, m.running_mean)
    _copy(out.running_var, m.running_var)
    if m.affine:
        _copy(out.weight, m.weight)
        _copy(out.bias, m.bias)
    out.train(m.train)
    return out


def _prelu(nn, m):
    out = nn.PReLU(m.weight.numel()).to(m.weight.dtype)
    _copy(out.weight, m.weight)
    return out


def _maxpool(nn, m):
    return nn.MaxPool2d((m.kH, m.kW), (m.dH, m.dW), (m.padH, m.padW), ceil_mode=m.ceil_mode)


def _avgpool(nn, m):
    if not m.divide:
        raise TypeError("SpatialAveragePooling(divide=False) has no flambeau.nn counterpart")
    return nn.AvgPool2d(
        (m.kH, m.kW), (m.dH, m.dW), (m.padH, m.padW), ceil_mode=m.ceil_mode,
        count_include_pad=m.count_include_pad,
    )  # fmt: skip


def _dropout(nn, m):
    if not m.v2 or isinstance(m, dropout.SpatialDropout):
        raise TypeError("only Torch7's default (v2) Dropout has a flambeau.nn counterpart")
    return nn.Dropout(m.p)


# Exact classes (subclasses differ: ReLU6 is a HardTanh, SpatialSoftMax a SoftMax, ...).
_SIMPLE = {
    transfer.Tanh: lambda nn, m: nn.Tanh(),
    transfer.Sigmoid: lambda nn, m: nn.Sigmoid(),
    transfer.ReLU: lambda nn, m: nn.ReLU(),
    transfer.ReLU6: lambda nn, m: nn.ReLU6(),
    transfer.Threshold: lambda nn, m: nn.Threshold(m.threshold, m.val),
    transfer.HardTanh: lambda nn, m: nn.Hardtanh(m.min_val, m.max_val),
    transfer.ELU: lambda nn, m: nn.ELU(m.alpha),
    transfer.LeakyReLU: lambda nn, m: nn.LeakyReLU(m.negval),
    transfer.HardShrink: lambda nn, m: nn.Hardshrink(m.lambd),
    transfer.SoftShrink: lambda nn, m: nn.Softshrink(m.lambd),
    transfer.SoftPlus: lambda nn, m: nn.Softplus(m.beta, m.threshold),
    transfer.SoftSign: lambda nn, m: nn.Softsign(),
    transfer.LogSigmoid: lambda nn, m: nn.LogSigmoid(),
    transfer.TanhShrink: lambda nn, m: nn.Tanhshrink(),
    # Torch7 normalises dim 1 of a batch (features, or feature planes of images).
    transfer.SoftMax: lambda nn, m: nn.Softmax(dim=1),
    transfer.SpatialSoftMax: lambda nn, m: nn.Softmax(dim=1),
    transfer.LogSoftMax: lambda nn, m: nn.LogSoftmax(dim=1),
    transfer.SoftMin: lambda nn, m: nn.Softmin(dim=1),
    transfer.PReLU: _prelu,
    tables.Identity: lambda nn, m: nn.Identity(),
    linear.Linear: _linear,
    convolution.SpatialConvolution: _spatial_conv,
    convolution.SpatialConvolutionMM: _spatial_conv,
    convolution.SpatialDilatedConvolution: _spatial_conv,
    convolution.SpatialFullConvolution: _spatial_conv,
    convolution.VolumetricConvolution: _volumetric,
    pooling.SpatialMaxPooling: _maxpool,
    pooling.SpatialAveragePooling: _avgpool,
    normalization.BatchNormalization: _batchnorm,
    normalization.SpatialBatchNormalization: _batchnorm,
    dropout.Dropout: _dropout,
}


def to_nn(module):
    """The flambeau.nn module computing what `module` computes on batched input, with its
    weights copied (in the legacy module's dtype). Sequential converts child by child.

    Raises TypeError for a module without a counterpart (tables, Torch7-only layers).

    >>> from flambeau.legacy import nn
    >>> net = nn.Sequential().add(nn.Linear(3, 2)).add(nn.ReLU())
    >>> nn.to_nn(net)
    Sequential(
      (0): Linear(in_features=3, out_features=2, bias=True)
      (1): ReLU()
    )
    """
    nn = _nn()
    if type(module) is containers.Sequential:
        return nn.Sequential(*[to_nn(m) for m in module.modules])
    convert = _SIMPLE.get(type(module))
    if convert is None:
        raise TypeError(f"{type(module).__name__} has no flambeau.nn counterpart")
    return convert(nn, module)
