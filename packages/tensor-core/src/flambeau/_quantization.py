"""PyTorch's fake quantization: values rounded onto an integer grid and back, so that
training sees quantization error while tensors stay floating point.

    q = clamp(round(x / scale) + zero_point, quant_min, quant_max)
    y = (q - zero_point) * scale

with PyTorch's arithmetic: x times the float32 reciprocal of scale, rounded half to even.
The gradient passes straight through where round(x / scale) + zero_point lies within
[quant_min, quant_max] and is zero where it was clamped (scale and zero_point get none).
Both functions compose core operators, so autograd differentiates them.
"""

from __future__ import annotations

from flambeau import _C
from flambeau._arg_checks import check_tensor, torch_type_name
from flambeau.overrides import _dispatch_on

__all__ = ["fake_quantize_per_channel_affine", "fake_quantize_per_tensor_affine"]


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _check_input(fn: str, input) -> None:
    check_tensor(fn, "input", 1, input)
    if input.dtype not in (_C.float32, _C.float16, _C.bfloat16, _C.float64):
        raise NotImplementedError(f"\"{fn}\" not implemented for '{torch_type_name(input.dtype)}'")


def _fake_quantize(input, inv_scale, scale, zero_point, quant_min, quant_max):
    """The formula above over broadcast scale / zero_point tensors. An integer zero point
    is added after rounding, a floating one before (PyTorch's two kernels)."""
    if zero_point.dtype.is_floating_point:
        q = _C.round(input * inv_scale + zero_point)
    else:
        q = _C.round(input * inv_scale) + zero_point
    inside = (q >= quant_min) & (q <= quant_max)
    out = ((q.clamp(quant_min, quant_max) - zero_point) * scale).to(input.dtype)
    if input.requires_grad:
        # Straight-through: the value of `out`, the gradient `inside` with respect to input.
        out = out.detach() + (input - input.detach()) * inside
    return out


@_dispatch_on("input", "scale", "zero_point")
def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Quantizes input to integers in [quant_min, quant_max] with one scale and zero point
    (numbers, or 0-dim tensors) and maps them back to floats.

    >>> x = flambeau.tensor([0.04, 0.15, -0.3, 100.0])
    >>> flambeau.fake_quantize_per_tensor_affine(x, 0.1, 0, 0, 255)
    tensor([ 0.0000,  0.2000,  0.0000, 25.5000])
    """
    fn = "fake_quantize_per_tensor_affine"
    _check_input(fn, input)
    quant_min, quant_max = int(quant_min), int(quant_max)
    _check_range(quant_min, quant_max)
    scale = float(scale.item() if isinstance(scale, _C.Tensor) else scale)
    zero_point = int(zero_point.item() if isinstance(zero_point, _C.Tensor) else zero_point)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    scale32 = _C.tensor(scale, dtype=_C.float32)
    inv_scale = _C.tensor(1.0, dtype=_C.float32) / scale32
    zero_point = _C.tensor(zero_point, dtype=_C.int64)
    return _fake_quantize(input, inv_scale, scale32, zero_point, quant_min, quant_max)


@_dispatch_on("input", "scale", "zero_point")
def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """As fake_quantize_per_tensor_affine with a scale and zero point per index of dim
    `axis` (1-D tensors of input.size(axis) elements).

    >>> x = flambeau.tensor([[0.04, 0.15], [-0.3, 100.0]])
    >>> scale = flambeau.tensor([0.1, 1.0])
    >>> zero_point = flambeau.tensor([0, 10], dtype=flambeau.int32)
    >>> flambeau.fake_quantize_per_channel_affine(x, scale, zero_point, 0, 0, 255)
    tensor([[  0.0000,   0.2000],
            [  0.0000, 100.0000]])
    """
    fn = "fake_quantize_per_channel_affine"
    _check_input(fn, input)
    check_tensor(fn, "scale", 2, scale)
    check_tensor(fn, "zero_point", 3, zero_point)
    quant_min, quant_max = int(quant_min), int(quant_max)
    _check_range(quant_min, quant_max)
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.dtype not in (_C.float32, _C.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {torch_type_name(scale.dtype)}")
    if zero_point.dtype not in (_C.int32, _C.float32, _C.float16):
        raise RuntimeError(
            f"Zero-point must be Int32, Float or Half, found {torch_type_name(zero_point.dtype)}"
        )
    if not 0 <= axis < input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if scale.numel() != input.shape[axis]:
        raise RuntimeError(
            "dimensions of scale and zero-point are not consistent with input tensor"
        )
    if zero_point.numel() and (
        zero_point.min().item() < quant_min or zero_point.max().item() > quant_max
    ):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    shape = [1] * input.dim()
    shape[axis] = -1
    scale32 = scale.detach().to(_C.float32).reshape(shape)
    inv_scale = 1.0 / scale32
    integral = zero_point.dtype == _C.int32
    zero_point = zero_point.detach().to(_C.int64 if integral else _C.float32).reshape(shape)
    return _fake_quantize(input, inv_scale, scale32, zero_point, quant_min, quant_max)
