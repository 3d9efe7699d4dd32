"""An ONNX model's graph as the ``GraphDef`` TensorBoard's graph plugin draws
(``add_onnx_graph``). Needs the ``onnx`` package, imported when a graph is read."""

from __future__ import annotations

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.versions_pb2 import VersionDef

from flambeau.utils.tensorboard._protos import tensor_shape

_PRODUCER = 22  # the GraphDef version PyTorch writes, which TensorBoard reads


def load_onnx_graph(path):
    """The ``GraphDef`` of the ONNX model file at ``path``."""
    import onnx

    return onnx_graph_def(onnx.load(path).graph)


def _variable(value_info) -> NodeDef:
    tensor_type = value_info.type.tensor_type
    return NodeDef(
        name=value_info.name.encode("utf_8"),
        op="Variable",
        input=[],
        attr={
            "dtype": AttrValue(type=tensor_type.elem_type),
            "shape": AttrValue(shape=tensor_shape(d.dim_value for d in tensor_type.shape.dim)),
        },
    )


def _operator(node) -> NodeDef:
    # Each attribute as its fields' values joined by " = " (its name, then its value).
    attributes = ", ".join(
        " = ".join(str(value) for _, value in attribute.ListFields())
        for attribute in node.attribute
    )
    return NodeDef(
        name=node.output[0].encode("utf_8"),
        op=node.op_type,
        input=node.input,
        attr={"parameters": AttrValue(s=attributes.encode("utf_8"))},
    )


def onnx_graph_def(graph) -> GraphDef:
    """A ``GraphDef`` of an ONNX ``GraphProto``: its inputs and outputs as ``Variable``
    nodes with their element type and shape, then one node per operator, named after
    its first output."""
    nodes = [_variable(v) for v in (*graph.input, *graph.output)]
    nodes += [_operator(node) for node in graph.node]
    return GraphDef(node=nodes, versions=VersionDef(producer=_PRODUCER))
