"""``Graph``: the intermediate representation of flambeau.fx, a list of :class:`Node` s,
and the Python code generated from it (``torch.fx.graph``)."""

from __future__ import annotations

import builtins
import contextlib
import copy
import enum
import inspect
import keyword
import math
import re
import types
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import flambeau

from .node import (
    Node,
    _flambeau_path,
    _get_qualified_name,
    _is_from_flambeau,
    _legal_ops,
    _type_repr,
    map_arg,
)

__all__ = ["Graph", "PythonCode", "CodeGen"]

reflectable_magic_methods = {
    "add": "{} + {}",
    "sub": "{} - {}",
    "mul": "{} * {}",
    "floordiv": "{} // {}",
    "truediv": "{} / {}",
    "div": "{} / {}",
    "mod": "{} % {}",
    "pow": "{} ** {}",
    "lshift": "{} << {}",
    "rshift": "{} >> {}",
    "and_": "{} & {}",
    "or_": "{} | {}",
    "xor": "{} ^ {}",
    "getitem": "{}[{}]",
    "matmul": "{} @ {}",
}

magic_methods = {
    "eq": "{} == {}",
    "ne": "{} != {}",
    "lt": "{} < {}",
    "gt": "{} > {}",
    "le": "{} <= {}",
    "ge": "{} >= {}",
    "pos": "+{}",
    "neg": "-{}",
    "invert": "~{}",
    **reflectable_magic_methods,
}

# Objects every generated function finds among its globals, by these names.
_custom_builtins: dict[str, tuple[str, Any]] = {
    "inf": ("from math import inf", math.inf),
    "nan": ("from math import nan", math.nan),
    "NoneType": ("NoneType = type(None)", type(None)),
    "flambeau": ("import flambeau", flambeau),
    "device": ("from flambeau import device", flambeau.device),
}

# Names a generated variable may not take: keywords, builtins and the globals above.
_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_names.update({name: obj for name, (_, obj) in _custom_builtins.items()})

_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])").sub
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


def _snake_case(s: str) -> str:
    """``pascalCase`` -> ``pascal_case``, ``ALL_CAPS`` -> ``all_caps``."""
    return _snake_case_sub(r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


_dtype_abbrs = {
    getattr(flambeau, name): abbr
    for name, abbr in (
        ("bfloat16", "bf16"),
        ("float64", "f64"),
        ("float32", "f32"),
        ("float16", "f16"),
        ("complex32", "c32"),
        ("complex64", "c64"),
        ("complex128", "c128"),
        ("int8", "i8"),
        ("int16", "i16"),
        ("int32", "i32"),
        ("int64", "i64"),
        ("bool", "b8"),
        ("uint8", "u8"),
        ("uint16", "u16"),
        ("uint32", "u32"),
        ("uint64", "u64"),
    )  # fmt: skip
    if isinstance(getattr(flambeau, name, None), flambeau.dtype)
}


class _Namespace:
    """Unique names for objects: each object gets one name, no two objects the same
    one, and no name shadows a builtin unless it is that builtin."""

    def __init__(self):
        self._obj_to_name: dict = {}
        self._used_names: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj) -> None:
        existing = self._obj_to_name.setdefault(obj, name)
        if existing is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@dataclass
class PythonCode:
    """The Python source of a graph's function (``src``) and the globals it needs.

    >>> import flambeau.fx as fx
    >>> code = fx.symbolic_trace(lambda x: x + 1).graph.python_code("self")
    >>> print(code.src.strip())
    def forward(self, x):
        add = x + 1;  x = None
        return add
    """

    src: str
    globals: dict


def _format_target(base: str, target: str) -> str:
    r = base
    for e in target.split("."):
        r = f'getattr({r}, "{e}")' if not e.isidentifier() else f"{r}.{e}"
    return r


class _InsertPoint:
    def __init__(self, graph: Graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class _node_list:  # noqa: N801 - PyTorch's name
    """A live view of a graph's nodes in order; ``reversed`` walks it backwards. Nodes
    erased or inserted while iterating are handled."""

    def __init__(self, graph: Graph, direction: str = "_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self):
        return iter(_node_list(self.graph, "_prev" if self.direction == "_next" else "_next"))


class _FindNodesLookupTable:
    """(op, target) -> nodes, so that Graph.find_nodes need not walk the graph."""

    def __init__(self):
        self.table: dict = defaultdict(dict)

    @staticmethod
    def _key(node: Node):
        return (node.op, node.target if node.op == "call_function" else None)

    def __contains__(self, node: Node) -> bool:
        return node in self.table[self._key(node)]

    def insert(self, node: Node) -> None:
        self.table[self._key(node)][node] = None

    def remove(self, node: Node) -> None:
        self.table[self._key(node)].pop(node)

    def find_nodes(self, *, op: str, target=None) -> list:
        if op == "call_function":
            if target is None:
                raise AssertionError("target must not be None for call_function op")
            return list(self.table[(op, target)])
        if target is None:
            return list(self.table[(op, None)])
        return [n for n in self.table[(op, None)] if n.target == target]


# ---- code generation ------------------------------------------------------------------------


class CodeGen:
    """Turns a graph's nodes into the Python source of a function. Subclasses change the
    signature (``gen_fn_def``), the return statement (``generate_output``) or how inputs
    and outputs are processed.

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: x.relu())
    >>> isinstance(gm.graph._codegen, fx.CodeGen)
    True
    """

    def __init__(self):
        self._body_transformer: Callable | None = None
        self._func_name: str = "forward"

    def gen_fn_def(self, free_vars: list, maybe_return_annotation: str) -> str:
        """The ``def`` line: ``self`` first, then the placeholders."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args, repr_fn=repr) -> str:
        """The return statement (not indented)."""
        return f"return {repr_fn(output_args)}"

    def process_inputs(self, *args):
        """The inputs as the graph takes them (identity here)."""
        return args

    def process_outputs(self, outputs):
        """The outputs as the function returns them (identity here)."""
        return outputs

    def additional_globals(self) -> list:
        """(name, object) pairs the generated code needs besides the graph's own."""
        return []

    def _gen_python_code(self, nodes, root_module: str, namespace: _Namespace, *,
                         verbose: bool = False) -> PythonCode:  # fmt: skip
        free_vars: list[str] = []
        body: list[str] = []
        globals_: dict[str, Any] = {}
        wrapped_fns: dict[str, None] = {}
        maybe_return_annotation = [""]

        def add_global(name_hint: str, obj) -> str:
            # flambeau's public functions are spelled out (flambeau.relu): `flambeau` is
            # among the globals.
            if _is_from_flambeau(obj) and obj is not flambeau.device:
                path = _flambeau_path(obj)
                if path is not None:
                    return path
            global_name = namespace.create_name(name_hint, obj)
            if global_name in globals_:
                if globals_[global_name] is not obj:
                    raise AssertionError(f"Global name {global_name} already assigned")
                return global_name
            globals_[global_name] = obj
            return global_name

        for name, (_, obj) in _custom_builtins.items():
            add_global(name, obj)

        def type_repr(o) -> str:
            if o == ():
                return "()"
            typename = _type_repr(o)
            origin = getattr(o, "__origin__", None)
            if origin is not None:
                origin_name = add_global(_type_repr(origin), origin)
                args = getattr(o, "__args__", ())
                if args:
                    return f"{origin_name}[{','.join(type_repr(a) for a in args)}]"
                return origin_name
            return add_global(typename, o)

        def _get_repr(arg) -> str:
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                name = add_global(_get_qualified_name(type(arg)), type(arg))
                return f"{name}{repr(tuple(arg))}"
            if isinstance(arg, enum.Enum):
                cls = arg.__class__
                return f"{add_global(cls.__name__, cls)}.{arg.name}"
            if isinstance(arg, flambeau.Tensor):
                dtype = str(arg.dtype).split(".")[-1]
                return f"flambeau.Tensor(size={list(arg.size())}, dtype={dtype})"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({_get_repr(arg[0])},)"
                return "(" + ", ".join(_get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(_get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                start, stop, step = (_get_repr(v) for v in (arg.start, arg.stop, arg.step))
                return f"slice({start}, {stop}, {step})"
            if isinstance(arg, (types.FunctionType, types.BuiltinFunctionType, type)):
                return add_global(_get_qualified_name(arg), arg)
            return repr(arg)

        def _format_args(args, kwargs) -> str:
            res = [_get_repr(a) for a in args]
            res.extend(f"{k} = {_get_repr(v)}" for k, v in kwargs.items())
            return ", ".join(res)

        # Free each value after its last use, as PyTorch's generated code does.
        node_to_last_use: dict = {}
        user_to_last_uses: dict = {}
        for node in reversed(nodes):
            for input_node in node._input_nodes:
                if input_node not in node_to_last_use:
                    node_to_last_use[input_node] = node
                    user_to_last_uses.setdefault(node, []).append(input_node)

        def delete_unused_values(user: Node) -> None:
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(user_to_last_uses.get(user, []))
            if len(user.users) == 0:
                to_delete.append(user)
            if to_delete:
                body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) + "\n")
            else:
                body.append("\n")

        prev_summary = None

        def emit_node(node: Node) -> None:
            annotation = "" if node.type is None else f" : {type_repr(node.type)}"
            if verbose:
                meta = node.meta.get("tensor_meta")
                shape = getattr(meta, "shape", None)
                if shape is not None and getattr(meta, "dtype", None) in _dtype_abbrs:
                    dims = ", ".join(str(s) for s in shape)
                    annotation = f': "{_dtype_abbrs[meta.dtype]}[{dims}]"'
            if node.op == "placeholder":
                default = "" if not node.args else f" = {_get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{annotation}{default}")
                raw_name = node.target.replace("*", "")
                if raw_name != repr(node):
                    body.append(f"{repr(node)} = {raw_name}\n")
                return
            if node.op == "call_method":
                method = _format_target(_get_repr(node.args[0]), node.target)
                call = f"{method}({_format_args(node.args[1:], node.kwargs)})"
                body.append(f"{repr(node)}{annotation} = {call}")
                return
            if node.op == "call_function":
                target = node.target
                if getattr(target, "__module__", "") == "_operator" and (
                    target.__name__ in magic_methods
                ):
                    body.append(
                        f"{repr(node)}{annotation} = "
                        + magic_methods[target.__name__].format(*(_get_repr(a) for a in node.args))
                    )
                    return
                global_name = add_global(_get_qualified_name(target), target)
                if (
                    global_name == "getattr"
                    and len(node.args) == 2
                    and isinstance(node.args[1], str)
                    and node.args[1].isidentifier()
                ):
                    body.append(
                        f"{repr(node)}{annotation} = "
                        f"{_format_target(_get_repr(node.args[0]), node.args[1])}"
                    )
                    return
                call = f"{global_name}({_format_args(node.args, node.kwargs)})"
                body.append(f"{repr(node)}{annotation} = {call}")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                module = _format_target(root_module, node.target)
                call = f"{module}({_format_args(node.args, node.kwargs)})"
                body.append(f"{repr(node)}{annotation} = {call}")
                return
            if node.op == "get_attr":
                body.append(
                    f"{repr(node)}{annotation} = {_format_target(root_module, node.target)}"
                )
                return
            if node.op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0], repr_fn=_get_repr))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        for node in nodes:
            if verbose and node.op not in ("placeholder", "output"):
                trace = node.stack_trace
                summary = (
                    f"\n# File: {trace.strip().splitlines()[-1].strip()}\n"
                    if trace
                    else "\n# No stacktrace found for following nodes\n"
                )
                if summary != prev_summary:
                    prev_summary = summary
                    body.append(summary)
            emit_node(node)
            delete_unused_values(node)

        if not body:
            body.append("pass\n")
        if wrapped_fns:
            from ._symbolic_trace import wrap

            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        else:
            wrap_stmts = ""
        if self._body_transformer is not None:
            body = self._body_transformer(body)
        for name, value in self.additional_globals():
            add_global(name, value)
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        fn_code = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
        return PythonCode(fn_code, globals_)


# ---- Graph ----------------------------------------------------------------------------------


class Graph:
    """The intermediate representation of flambeau.fx: a doubly linked list of
    :class:`Node` s, each a placeholder (an input), a get_attr, a call of a function,
    method or submodule, or the output. ``symbolic_trace`` records one; graphs can also
    be built and edited by hand, then turned into a module by :class:`GraphModule`.

    >>> import flambeau.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> y = g.call_function(flambeau.relu, (x,))
    >>> out = g.output(y)
    >>> print(g)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %relu : [num_users=1] = call_function[target=flambeau.relu](args = (%x,), kwargs = {})
        return relu
    >>> gm = fx.GraphModule(flambeau.nn.Module(), g)
    >>> gm(flambeau.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields: dict = {}
        self._find_nodes_lookup_table = _FindNodesLookupTable()

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _node_list:
        """The nodes in order: a live view with ``len`` and ``reversed``; erasing or
        inserting nodes while iterating over it is safe."""
        return _node_list(self)

    def output_node(self) -> Node:
        """The graph's output node (its last node)."""
        node = next(iter(reversed(self.nodes)))
        if node.op != "output":
            raise AssertionError(f"Expected output node, got op={node.op}")
        return node

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        """The nodes with this ``op`` (and ``target``; required for call_function), in
        graph order unless ``sort`` is False.

        >>> import flambeau.fx as fx
        >>> gm = fx.symbolic_trace(lambda x: flambeau.relu(x) + flambeau.relu(x * 2))
        >>> gm.graph.find_nodes(op="call_function", target=flambeau.relu)
        [relu, relu_1]
        """
        found = self._find_nodes_lookup_table.find_nodes(op=op, target=target)
        if sort and len(found) > 1:
            order = {n: i for i, n in enumerate(self.nodes)}
            found.sort(key=order.__getitem__)
        return found

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copies the nodes of ``g`` into this graph (``val_map`` maps g's nodes to the
        copies, and may be given entries to use instead of copying); returns the value
        g's output node returns, in this graph's nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            output_val, old_output = output_vals
            new_output = g.output(output_val, type_expr=getattr(old_output, "type", None))
            new_output.meta = copy.copy(old_output.meta)
        return g

    def create_node(self, op: str, target, args=None, kwargs=None, name: str | None = None,
                    type_expr=None) -> Node:  # fmt: skip
        """Creates a node at the insert point (see ``inserting_before``/``inserting_after``)."""
        if not args:
            args = ()
        elif not isinstance(args, tuple):
            raise AssertionError(f"args must be a tuple, got {type(args)}")
        if not kwargs:
            kwargs = {}
        elif not isinstance(kwargs, dict):
            raise AssertionError(f"kwargs must be a dict, got {type(kwargs)}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        for hook in getattr(self.owning_module, "_create_node_hooks", None) or ():
            hook(n)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._find_nodes_lookup_table.insert(n)
        self._len += 1
        return n

    def process_inputs(self, *args):
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        return self._codegen.process_outputs(out)

    def erase_node(self, to_erase: Node) -> None:
        """Removes a node that has no users left (RuntimeError otherwise)."""
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                f"users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        for hook in getattr(self.owning_module, "_erase_node_hooks", None) or ():
            hook(to_erase)
        self._find_nodes_lookup_table.remove(to_erase)
        to_erase._remove_from_list()
        object.__setattr__(to_erase, "_erased", True)
        self._len -= 1
        to_erase._update_args_kwargs(
            map_arg(to_erase._args, lambda n: None), map_arg(to_erase._kwargs, lambda n: None)
        )

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """Makes new nodes go before ``n`` (the start of the graph if None); as a context
        manager, restores the previous insert point on exit.

        >>> import flambeau.fx as fx
        >>> gm = fx.symbolic_trace(lambda x: x + 1)
        >>> add = gm.graph.find_nodes(op="call_function", target=__import__("operator").add)[0]
        >>> with gm.graph.inserting_before(add):
        ...     neg = gm.graph.call_function(flambeau.neg, (add.args[0],))
        >>> add.update_arg(0, neg)
        >>> _ = gm.recompile()
        >>> gm(flambeau.tensor([1.0]))
        tensor([0.])
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """Makes new nodes go after ``n`` (the end of the graph if None); as a context
        manager, restores the previous insert point on exit."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def placeholder(self, name: str, type_expr=None, default_value=inspect.Signature.empty) -> Node:
        """An input of the function, named ``name`` (with a default value if given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        """Fetches the parameter, buffer or submodule at dotted ``qualified_name``."""
        mod = self.owning_module
        if mod is not None:
            path, _, field = qualified_name.rpartition(".")
            try:
                sub = mod.get_submodule(path)
                exists = hasattr(sub, field)
            except AttributeError:
                exists = False
            if not exists:
                warnings.warn(
                    "Attempted to insert a get_attr Node with no underlying reference in the "
                    "owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                    "submodule, GraphModule.add_parameter to add the necessary Parameter, or "
                    "nn.Module.register_buffer to add the necessary buffer",
                    stacklevel=2,
                )
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        """Calls the submodule at dotted ``module_name`` (args without ``self``)."""
        mod = self.owning_module
        if mod is not None:
            try:
                mod.get_submodule(module_name)
            except AttributeError:
                warnings.warn(
                    "Attempted to insert a call_module Node with no underlying reference in "
                    "the owning GraphModule! Call GraphModule.add_submodule to add the "
                    "necessary submodule",
                    stacklevel=2,
                )
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        """Calls method ``method_name`` of ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None,
                      name: str | None = None) -> Node:  # fmt: skip
        """Calls ``the_function`` (any Python callable)."""
        return self.create_node(
            "call_function", the_function, args, kwargs, name=name, type_expr=type_expr
        )

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """Copies ``node`` (of another graph) into this one; ``arg_transform`` maps the
        nodes among its arguments to this graph's."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def output(self, result, type_expr=None) -> Node:
        """The output node: the function returns ``result``."""
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def _target_to_str(self, target) -> str:
        if callable(target):
            op = target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def python_code(self, root_module: str, *, verbose: bool = False, **_ignored) -> PythonCode:
        """The Python source of this graph as the ``forward`` of a module, whose
        attributes are reached through ``root_module`` (usually ``"self"``)."""
        namespace = _Namespace()

        def node_repr(n: Node) -> str:
            return namespace.create_name(n.name, n)

        saved = {}
        for node in self.nodes:
            saved[node] = node._repr_fn
            object.__setattr__(node, "_repr_fn", node_repr)
        try:
            return self._codegen._gen_python_code(self.nodes, root_module, namespace,
                                                  verbose=verbose)  # fmt: skip
        finally:
            for node, fn in saved.items():
                object.__setattr__(node, "_repr_fn", fn)

    def __str__(self) -> str:
        placeholder_names: list = []
        maybe_return_typename = [""]
        node_strs = [n.format_node(placeholder_names, maybe_return_typename) for n in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self) -> None:
        """Prints the nodes as a table (opcode, name, target, args, kwargs); with the
        ``tabulate`` package when it is installed, as PyTorch (which requires it).

        >>> import flambeau.fx as fx
        >>> fx.symbolic_trace(lambda x: x + 1).graph.print_tabular()
        opcode...name...target...args...kwargs
        ---...
        placeholder...x...x...()...{}
        call_function...add...<built-in function add>...(x, 1)...{}
        output...output...output...(add,)...{}
        """
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate
        except ImportError:
            cells = [headers] + [[str(c) for c in row] for row in rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
            lines = [cells[0], ["-" * w for w in widths], *cells[1:]]
            for cols in lines:
                print("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
            return
        print(tabulate(rows, headers=headers))

    def lint(self) -> None:
        """Checks the graph is well formed: nodes belong to it, come in topological order,
        have unique names, and (with an owning module) name targets that exist."""

        def check_arg(arg: Node, n: Node | None = None) -> None:
            context = f" of Node '{n}' " if n else " "
            if arg.graph is not self:
                raise RuntimeError(
                    f"Argument '{arg}'{context}does not belong to this Graph, but was used as "
                    "an argument! If you are copying nodes from another graph, make sure to "
                    f"use ``arg_transform`` on node_copy() to remap values\n{self}"
                )
            if arg not in seen_values:
                raise RuntimeError(
                    f"Argument '{arg}'{context}was used before it has been defined! Please "
                    f"check that Nodes in the graph are topologically ordered\n{self}"
                )

        seen_names: set = set()
        seen_values: set = set()
        for node in self.nodes:
            if node.op not in _legal_ops:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node not in self._find_nodes_lookup_table:
                raise RuntimeError(f"Node '{node}' is not added to the side table")
            for arg in node._input_nodes:
                check_arg(arg, node)
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)

        if self.owning_module:
            from flambeau.nn import Module

            for node in self.nodes:
                if node.op == "call_function":
                    if not callable(node.target):
                        raise ValueError(
                            f"Node {node} target {node.target} has type "
                            f"{flambeau.typename(node.target)} but a Callable is expected"
                        )
                elif not isinstance(node.target, str):
                    raise ValueError(
                        f"Node {node} target {node.target} has type "
                        f"{flambeau.typename(node.target)} but a str is expected"
                    )
                if node.op in ("get_attr", "call_module"):
                    atoms = node.target.split(".")
                    m_itr = self.owning_module
                    for i, atom in enumerate(atoms):
                        new_m_itr = getattr(m_itr, atom, None)
                        seen_qualname = ".".join(atoms[:i])
                        if new_m_itr is None:
                            raise RuntimeError(
                                f"Node {node} target {node.target} references nonexistent "
                                f"attribute {atom} of {seen_qualname}"
                            )
                        if node.op == "call_module" and not isinstance(new_m_itr, Module):
                            raise RuntimeError(
                                f"Node {node} target {node.target} {atom} of {seen_qualname} "
                                "does not reference an nn.Module"
                            )
                        m_itr = new_m_itr

    def eliminate_dead_code(self, is_impure_node=None) -> bool:
        """Erases the nodes whose results nothing uses, unless impure (``Node.is_impure``,
        or ``is_impure_node(node)`` when given); returns whether the graph changed.

        >>> import flambeau.fx as fx
        >>> def f(x):
        ...     unused = x * 2
        ...     return x + 1
        >>> gm = fx.symbolic_trace(f)
        >>> gm.graph.eliminate_dead_code()
        True
        >>> [n.name for n in gm.graph.nodes]
        ['x', 'add', 'output']
        """
        self.lint()

        def impure(node: Node) -> bool:
            if is_impure_node is not None:
                return is_impure_node(node)
            return node.is_impure()

        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True

        if self.owning_module is not None:
            from .graph_module import GraphModule

            attrs = {n.target for n in self.find_nodes(op="get_attr")}
            for child_name, child in self.owning_module.named_children():
                if child_name in attrs and isinstance(child, GraphModule):
                    changed |= child.graph.eliminate_dead_code()
                    child.recompile()
        return changed

    def set_codegen(self, codegen: CodeGen) -> None:
        self._codegen = codegen

    def on_generate_code(self, make_transformer):
        """Registers ``make_transformer(current)``, a function of the current body
        transformer (or None) returning a new one: a function of the generated body's
        lines. As a context manager, restores the previous transformer on exit."""
        old = self._codegen._body_transformer
        self._codegen._body_transformer = make_transformer(old)

        @contextlib.contextmanager
        def restore():
            try:
                yield
            finally:
                self._codegen._body_transformer = old

        return restore()
