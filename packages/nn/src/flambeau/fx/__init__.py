"""flambeau.fx: symbolic tracing, a graph IR and Python code generation, as ``torch.fx``.

``symbolic_trace(module)`` runs the module's ``forward`` on :class:`Proxy` values,
recording each operation as a :class:`Node` of a :class:`Graph`, and returns a
:class:`GraphModule` whose ``forward`` is Python code generated from that graph. Graphs
can be inspected and edited (nodes, ``Graph.inserting_before``, ``erase_node``,
``eliminate_dead_code``, :func:`replace_pattern`), run node by node
(:class:`Interpreter`) or rewritten (:class:`Transformer`).
"""

from . import immutable_collections, passes, subgraph_rewriter  # noqa: F401
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import CodeGen, Graph  # noqa: F401
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = [
    "symbolic_trace",
    "Tracer",
    "wrap",
    "Graph",
    "GraphModule",
    "Interpreter",
    "Transformer",
    "Node",
    "Proxy",
    "replace_pattern",
    "has_side_effect",
    "map_arg",
]
