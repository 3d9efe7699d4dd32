"""Scalars and whole tensors as summaries (``add_scalar``, ``add_tensor``)."""

from __future__ import annotations

import struct

from tensorboard.compat.proto.tensor_pb2 import TensorProto

import flambeau
from flambeau.utils.tensorboard._protos import one_value, plugin_metadata, tensor_shape
from flambeau.utils.tensorboard._to_numpy import make_np

_PROTO_LIMIT = 1 << 31  # bytes a protocol buffer can hold


def half_to_int(f: float) -> int:
    """The integer PyTorch stores in a ``TensorProto``'s ``half_val`` for a half-precision
    (float16 or bfloat16) value: the bits of ``f`` as a single-precision float, read as a
    signed 32-bit integer. ``int_to_half`` undoes it.

    >>> from flambeau.utils.tensorboard.summary import half_to_int
    >>> half_to_int(1.0)
    1065353216
    """
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i: int) -> float:
    """The value ``half_to_int`` turned into ``i``.

    >>> from flambeau.utils.tensorboard.summary import half_to_int, int_to_half
    >>> int_to_half(half_to_int(0.5))
    0.5
    """
    return struct.unpack("f", struct.pack("i", i))[0]


def _halves(t: flambeau.Tensor) -> list[int]:
    return [half_to_int(x) for x in t.flatten().tolist()]


def _real_parts_interleaved(t: flambeau.Tensor) -> list[float]:
    return flambeau.view_as_real(t).flatten().tolist()


def _elements(t: flambeau.Tensor) -> list:
    return t.flatten().tolist()


# flambeau dtype name -> (TensorProto dtype, the TensorProto field, how to fill it); as
# PyTorch writes them (uint8 into uint32_val, half-precision values through half_to_int).
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", _halves),
    "bfloat16": ("DT_BFLOAT16", "half_val", _halves),
    "float32": ("DT_FLOAT", "float_val", _elements),
    "float64": ("DT_DOUBLE", "double_val", _elements),
    "int8": ("DT_INT8", "int_val", _elements),
    "uint8": ("DT_UINT8", "uint32_val", _elements),
    "int16": ("DT_INT16", "int_val", _elements),
    "int32": ("DT_INT32", "int_val", _elements),
    "int64": ("DT_INT64", "int64_val", _elements),
    "complex32": ("DT_COMPLEX32", "scomplex_val", _real_parts_interleaved),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _real_parts_interleaved),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _real_parts_interleaved),
    "bool": ("DT_BOOL", "bool_val", _elements),
}


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A ``Summary`` holding one scalar: ``tensor`` (a number, a one-element tensor or
    array) as ``simple_value``, or with ``new_style`` as a one-element ``DT_FLOAT`` tensor
    (``DT_DOUBLE`` with ``double_precision``) for the scalars plugin. ``collections`` is
    accepted and ignored, as in PyTorch. More than one element raises ``AssertionError``.

    >>> from flambeau.utils.tensorboard.summary import scalar
    >>> scalar("loss", flambeau.tensor(0.25)).value[0].simple_value
    0.25
    >>> scalar("loss", 0.25, new_style=True, double_precision=True).value[0].tensor.double_val
    [0.25]
    """
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions). "
            f"Was given size: {value.size} and {value.ndim} dimensions."
        )
    number = float(value)
    if not new_style:
        return one_value(name, simple_value=number)
    if double_precision:
        proto = TensorProto(double_val=[number], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[number], dtype="DT_FLOAT")
    return one_value(name, tensor=proto, metadata=plugin_metadata("scalars"))


def tensor_proto(tag, tensor):
    """A ``Summary`` holding a whole tensor (shape, dtype and every element) for the
    tensor plugin. ``tensor`` is a flambeau tensor (other array-likes pass through
    ``flambeau.as_tensor``); a dtype a ``TensorProto`` cannot hold (uint16, float8...)
    and a tensor of 2 GB or more raise ``ValueError``.

    >>> from flambeau.utils.tensorboard.summary import tensor_proto
    >>> proto = tensor_proto("weights", flambeau.tensor([[1, 2, 3]])).value[0].tensor
    >>> list(proto.int64_val)
    [1, 2, 3]
    >>> [d.size for d in proto.tensor_shape.dim]
    [1, 3]
    """
    if not isinstance(tensor, flambeau.Tensor):
        tensor = flambeau.as_tensor(tensor)
    if tensor.numel() * tensor.itemsize >= _PROTO_LIMIT:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    fields = _TENSOR_FIELDS.get(str(tensor.dtype).rpartition(".")[2])
    if fields is None:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values_of = fields
    proto = TensorProto(
        dtype=dtype, tensor_shape=tensor_shape(tensor.shape), **{field: values_of(tensor)}
    )
    return one_value(tag, metadata=plugin_metadata("tensor"), tensor=proto)
