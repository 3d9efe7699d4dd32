"""Small builders of the ``tensorboard.compat.proto`` messages every summary uses."""

from __future__ import annotations

from collections.abc import Iterable

from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto


def tensor_shape(dims: Iterable[int]) -> TensorShapeProto:
    """A ``TensorShapeProto`` of the given sizes (none: a scalar)."""
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(size)) for size in dims])


def plugin_metadata(plugin_name: str, content: bytes = b"") -> SummaryMetadata:
    """Metadata that hands a summary value to one TensorBoard plugin."""
    return SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name=plugin_name, content=content)
    )


def string_tensor(data: bytes, dims: Iterable[int]) -> TensorProto:
    """A ``DT_STRING`` tensor holding one byte string."""
    return TensorProto(dtype="DT_STRING", string_val=[data], tensor_shape=tensor_shape(dims))


def float_tensor(values, dims: Iterable[int]) -> TensorProto:
    """A ``DT_FLOAT`` tensor of the given (flattened, row-major) values."""
    return TensorProto(dtype="DT_FLOAT", float_val=values, tensor_shape=tensor_shape(dims))


def one_value(tag: str, **fields) -> Summary:
    """A ``Summary`` with one value: ``tag`` and the given ``Summary.Value`` fields."""
    return Summary(value=[Summary.Value(tag=tag, **fields)])
