"""``Interpreter`` runs a graph node by node; ``Transformer`` rewrites one into a new
GraphModule (``torch.fx.interpreter``)."""

from __future__ import annotations

import inspect

from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs a GraphModule's graph node by node: ``run`` calls ``run_node`` for each node,
    which calls the method named after its op (``placeholder``, ``get_attr``,
    ``call_function``, ``call_method``, ``call_module``, ``output``). Override those to
    observe or change execution.

    ``garbage_collect_values`` drops each value after its last use (keep them to inspect
    ``env`` afterwards); ``graph`` runs that graph with ``module``'s attributes.

    >>> import flambeau.fx as fx
    >>> class NegToSigmoid(fx.Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is flambeau.neg:
    ...             return flambeau.sigmoid(*args, **kwargs)
    ...         return super().call_function(target, args, kwargs)
    >>> gm = fx.symbolic_trace(lambda x: flambeau.neg(x) * 2)
    >>> NegToSigmoid(gm).run(flambeau.tensor([0.0]))
    tensor([1.])
    """

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        self.graph = graph if graph is not None else self.module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if self.garbage_collect_values:
            node_to_last_use: dict = {}
            self.user_to_last_uses: dict = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Runs the graph on ``args`` (one per placeholder) and returns its output.
        ``initial_env`` maps nodes to values to use instead of running them."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                output_val = self.env[node]
                return (
                    self.graph.process_outputs(output_val) if enable_io_processing else output_val
                )
        return None

    def boxed_run(self, args_list: list):
        """``run`` with the inputs in a list, which is cleared (so that they can be freed
        early)."""
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholders):
            detail = (
                "extra arguments" if len(args_list) > len(placeholders) else "missing arguments"
            )
            raise RuntimeError(
                f"Interpreter.boxed_run expected {len(placeholders)} arguments for placeholders "
                f"but received {len(args_list)} ({detail})"
            )
        env = dict(zip(placeholders, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        """Runs node ``n``: fetches its arguments' values and calls the method of its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        """The next input of ``run`` (all the rest for a ``*args`` placeholder), or the
        placeholder's default value."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from si

    def get_attr(self, target, args, kwargs):
        """The attribute of the module at dotted ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """``target(*args, **kwargs)``."""
        if isinstance(target, str):
            raise AssertionError("target should not be a string for call_function")
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """``args[0].<target>(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        """The submodule at dotted ``target`` called with ``args`` and ``kwargs``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        """The value the graph returns: ``args[0]``."""
        return args[0]

    def fetch_attr(self, target: str):
        """The attribute of ``self.module`` at dotted ``target``."""
        atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[: i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n) -> tuple:
        """``n.args`` and ``n.kwargs`` with each node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """``args`` with each node replaced by its value in ``env``."""

        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to "
                    "diagnose such issues"
                )
            return self.env[n_arg]

        return map_arg(args, load_arg)


class Transformer(Interpreter):
    """An Interpreter that runs the graph on proxies to record a new one: ``transform()``
    returns the new GraphModule. Override the op methods to emit other operations (with
    flambeau functions, methods and operators on the proxies they receive).

    >>> import flambeau.fx as fx
    >>> class ReluToGelu(fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is flambeau.relu:
    ...             target = flambeau.nn.functional.gelu
    ...         return super().call_function(target, args, kwargs)
    >>> gm = fx.symbolic_trace(lambda x: flambeau.relu(x) + 1)
    >>> new = ReluToGelu(gm).transform()
    >>> print(new.code.strip())
    def forward(self, x):
        gelu = flambeau.nn.functional.gelu(x);  x = None
        add = gelu + 1;  gelu = None
        return add
    """

    def __init__(self, module: GraphModule):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)

        class TransformerTracer(Tracer):
            def __init__(self, graph: Graph):
                super().__init__()
                self.graph = graph
                self.tensor_attrs: dict = {}

            def is_leaf_module(self, _, __) -> bool:
                return True

        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs) -> Proxy:
        """A placeholder of the new graph."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs) -> Proxy:
        """A get_attr node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        """A call_module node of the new graph."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        """A call_function node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The new GraphModule: the module's attributes with the recorded graph."""
        result = super().run(enable_io_processing=False)
        if result is not None:

            def strip_proxy(a):
                return a.node if isinstance(a, Proxy) else a

            new_output = self.new_graph.output(map_aggregate(result, strip_proxy))
            old_output = list(self.graph.nodes)[-1]
            new_output.meta.update(old_output.meta)
        return GraphModule(self.module, self.new_graph)
