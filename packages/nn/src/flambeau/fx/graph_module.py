"""``GraphModule``: an ``nn.Module`` whose ``forward`` is Python code generated from a
:class:`~flambeau.fx.Graph` (``torch.fx.graph_module``)."""

from __future__ import annotations

import copy
import itertools
import linecache

import flambeau
from flambeau.nn import Module, Parameter

from .graph import Graph, PythonCode, _custom_builtins

__all__ = ["GraphModule", "reduce_graph_module"]

_next_source_id = itertools.count()


def _exec_with_source(src: str, globals_: dict) -> None:
    """Runs src with its text in linecache, so tracebacks through the generated code
    show its lines."""
    key = f"<eval_with_key>.{next(_next_source_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src: str, globals_: dict):
    globals_copy = dict(globals_)
    _exec_with_source(src, globals_copy)
    return globals_copy["forward"]


def _format_import_block(globals_: dict) -> str:
    """Import statements that bind the generated code's globals (for pickling)."""
    lines = set()
    for name, obj in globals_.items():
        if name in _custom_builtins:
            lines.add(_custom_builtins[name][0])
            continue
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
        if module is None or qualname is None:
            raise RuntimeError(f"cannot pickle a graph referring to {obj!r} (global {name})")
        if "." in qualname:
            head, _, rest = qualname.partition(".")
            lines.add(f"from {module} import {head} as _fx_import_{name}")
            lines.add(f"{name} = _fx_import_{name}.{rest}")
        else:
            lines.add(f"from {module} import {qualname} as {name}")
    # The aliases go after the imports they use.
    return "\n".join(
        sorted(lines, key=lambda line: (not line.startswith(("from", "import")), line))
    )


def reduce_graph_module(body: dict, import_block: str):
    """Rebuilds a pickled GraphModule from its attributes and generated code (the code is
    traced again to recover the graph)."""
    fn_src = body.get("_code") or body["code"]
    forward = _forward_from_src(import_block + fn_src, {})
    return _deserialize_graph_module(forward, body)


class _CodeOnlyModule(Module):
    def __init__(self, body: dict):
        super().__init__()
        self.__dict__ = body


def _deserialize_graph_module(forward, body: dict):
    from ._symbolic_trace import Tracer

    _CodeOnlyModule.forward = forward
    tracer_cls = body.get("_tracer_cls") or Tracer

    class KeepModules(tracer_cls):
        def is_leaf_module(self, _, __) -> bool:
            return True

    com = _CodeOnlyModule(body)
    graph = KeepModules().trace(com, **(body.get("_tracer_extras") or {}))
    graph._tracer_cls = tracer_cls
    gm = GraphModule(com, graph, class_name=body.get("_graphmodule_cls_name", "GraphModule"))
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


def _copy_attr(from_module, to_module, target: str) -> None:
    """Copies the attribute at dotted ``target`` of from_module to the same path of
    to_module, creating empty Modules on the way."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # a parent was installed already, with this attribute
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, flambeau.Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, flambeau.Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _get_attr(model, attr_name: str):
    t = model
    for item in attr_name.split("."):
        t = getattr(t, item)
    return t


class GraphModule(Module):
    """A Module whose ``forward`` is generated from ``graph``. The submodules, parameters
    and buffers the graph's ``call_module`` / ``get_attr`` nodes name are copied from
    ``root`` (a Module, or a dict from dotted names to objects).

    ``code`` is the generated source. After editing ``graph`` in place, call
    ``recompile()``; assigning ``graph`` recompiles. ``class_name`` names the module in
    its repr.

    >>> import flambeau.fx as fx
    >>> net = flambeau.nn.Sequential(flambeau.nn.Linear(3, 3), flambeau.nn.ReLU())
    >>> gm = fx.symbolic_trace(net)
    >>> print(gm.code.strip())
    def forward(self, input):
        input_1 = input
        _0 = getattr(self, "0")(input_1);  input_1 = None
        _1 = getattr(self, "1")(_0);  _0 = None
        return _1
    >>> for node in gm.graph.nodes:  # make the ReLU a GELU
    ...     if node.target == "1":
    ...         node.op, node.target = "call_function", flambeau.nn.functional.gelu
    >>> _ = gm.recompile()
    >>> "flambeau.nn.functional.gelu(_0)" in gm.code
    True
    """

    def __new__(cls, *args, **kwargs):
        # Each instance has a class of its own: recompile() sets `forward` on it.
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            if isinstance(root, _CodeOnlyModule):
                for k, _ in root.named_children():
                    _copy_attr(root, self, k)
                for k, _ in root.named_buffers():
                    _copy_attr(root, self, k)
                for k, _ in root.named_parameters():
                    _copy_attr(root, self, k)
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            f"Node {node} referenced target {node.target} but that target was "
                            "not provided in ``root``!"
                        )
                    targets.append(node.target)
            targets.sort(key=lambda t: t.count("."))
            for target in targets:
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if graph._tracer_cls and "<locals>" not in graph._tracer_cls.__qualname__:
            self._tracer_cls = graph._tracer_cls
        self._tracer_extras = graph._tracer_extras or {}
        self.meta: dict = {}
        self._replace_hooks: list = []
        self._create_node_hooks: list = []
        self._erase_node_hooks: list = []

    @property
    def graph(self) -> Graph:
        """The graph; assigning one recompiles the module."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from ``graph``."""
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated!")
        return self._code

    def recompile(self) -> PythonCode:
        """Generates ``forward`` again from ``graph`` (after editing it in place)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        for child in self.children():
            if isinstance(child, GraphModule):
                child.recompile()
        return python_code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Installs ``m`` at dotted ``target``, creating empty Modules on the way; False
        when something on the way is not a Module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Removes the submodule at dotted ``target``; False when there is none."""
        *path, name = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, name) or not isinstance(getattr(mod, name), Module):
            return False
        delattr(mod, name)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Removes the submodules no ``call_module`` or ``get_attr`` node uses (a module is
        used when it is called, holds a fetched attribute, or contains a used module)."""
        used: set = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr") and isinstance(node.target, str):
                atoms = node.target.split(".")
                used.update(".".join(atoms[: i + 1]) for i in range(len(atoms)))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    used.update(f"{node.target}.{n}" for n, _ in submod.named_modules() if n)
        for name in [n for n, _ in self.named_modules() if n not in used]:
            self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:  # fmt: skip
        """The generated code as a class (with the shapes ShapeProp recorded, if any) and
        that of GraphModule children; printed unless ``print_output`` is False."""
        return _print_readable(self, self._get_name(), print_output)

    def __reduce__(self):
        body = dict(self.__dict__)
        python_code = self.recompile()
        import_block = _format_import_block(python_code.globals)
        del body["_graph"]
        body["_graphmodule_cls_name"] = type(self).__name__
        return (reduce_graph_module, (body, import_block))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake_mod = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"], type(self).__name__)
        for attr in ("_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_replace_hooks", "_create_node_hooks",
                     "_erase_node_hooks"):  # fmt: skip
            if attr in self.__dict__:
                setattr(res, attr, copy.deepcopy(self.__dict__[attr], memo))
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def __str__(self) -> str:
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])


def _addindent(text: str, spaces: int) -> str:
    """Indents every line but the first; blank lines stay empty (as PyTorch's)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


def _print_readable(module: GraphModule, module_name: str, print_output: bool = True) -> str:
    code = module.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
    out = _addindent(f"class {module_name}(flambeau.nn.Module):\n" + code, 4)
    children = [""]
    for name, child in module.named_children():
        if isinstance(child, GraphModule):
            children.append(_print_readable(child, name, print_output=False))
    out += _addindent("\n".join(children), 4)
    if print_output:
        print(out)
    return out
