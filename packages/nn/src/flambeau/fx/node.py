"""``Node``: one operation of a :class:`~flambeau.fx.Graph`, and the helpers that walk the
arguments nodes hold (``map_arg``, ``map_aggregate``), as ``torch.fx.node``."""

from __future__ import annotations

import builtins
import operator
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import flambeau

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

Target = Callable[..., Any] | str
Argument = Any  # a base value, a Node, or tuples / lists / dicts / slices / ranges of them

base_types = tuple(
    t
    for t in (
        str,
        int,
        float,
        bool,
        complex,
        flambeau.dtype,
        flambeau.Tensor,
        flambeau.device,
        getattr(flambeau, "memory_format", None),
        getattr(flambeau, "layout", None),
    )  # fmt: skip
    if isinstance(t, type)
)

_legal_ops = dict.fromkeys(
    ["placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"]
)

# Functions a call of which dead-code elimination keeps although nothing uses its result.
_side_effectful_functions: set = {operator.setitem}
for _name in ("_assert", "_assert_async"):
    if callable(getattr(flambeau, _name, None)):
        _side_effectful_functions.add(getattr(flambeau, _name))
# Random functions change the generator's state: a call of one is kept too.
_random_functions = {
    f
    for f in (
        getattr(flambeau, n, None)
        for n in (
            "rand",
            "randn",
            "randint",
            "randperm",
            "rand_like",
            "randn_like",
            "randint_like",
            "normal",
            "poisson",
            "bernoulli",
            "multinomial",
        )
    )  # fmt: skip
    if f is not None
}
del _name


def has_side_effect(fn):
    """Registers ``fn`` as a function whose calls ``Graph.eliminate_dead_code`` keeps even
    when their result is unused; returns ``fn``, so it decorates.

    >>> import flambeau.fx as fx
    >>> @fx.has_side_effect
    ... def log_value(x):
    ...     print(x)
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> _ = g.call_function(log_value, (x,))
    >>> _ = g.output(x)
    >>> g.eliminate_dead_code()
    False
    """
    _side_effectful_functions.add(fn)
    return fn


# ---- names of callables, as generated code and printouts spell them -------------------------

# Public namespaces that hold flambeau's functions, tried after the function's own module.
_PUBLIC_HOMES = (
    "flambeau",
    "flambeau.nn.functional",
    "flambeau.linalg",
    "flambeau.special",
    "flambeau.fft",
    "flambeau.nn.init",
)


def _is_from_flambeau(obj) -> bool:
    module = getattr(obj, "__module__", None)
    if isinstance(module, str):
        return module == "flambeau" or module.startswith("flambeau.")
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(flambeau, name, None) is obj


def _flambeau_path(obj) -> str | None:
    """The dotted public path under which obj is found ("flambeau.relu",
    "flambeau.nn.functional.softmax"), or None."""
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    if isinstance(obj, (types.MethodDescriptorType, types.WrapperDescriptorType,
                        types.FunctionType, types.BuiltinFunctionType)) and (
        getattr(flambeau.Tensor, name, None) is obj and getattr(flambeau, name, None) is not obj
    ):  # fmt: skip
        return f"flambeau.Tensor.{name}"
    module = getattr(obj, "__module__", None) or ""
    parts = module.split(".")
    own = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    for home in (*own, *_PUBLIC_HOMES):
        if not (home == "flambeau" or home.startswith("flambeau.")):
            continue
        if any(p.startswith("_") for p in home.split(".")):
            continue
        mod = sys.modules.get(home)
        if mod is not None and getattr(mod, name, None) is obj:
            return f"{home}.{name}"
    # A private helper: its own module, which `flambeau.` reaches as well once imported.
    mod = sys.modules.get(module)
    if module.startswith("flambeau.") and mod is not None and getattr(mod, name, None) is obj:
        return f"{module}.{name}"
    return None


def _get_qualified_name(func) -> str:
    """``module.name`` of a callable: a builtin by its bare name, flambeau's functions by
    their public path (``flambeau.relu``)."""
    name = getattr(func, "__name__", None)
    if name is None:
        return repr(func)
    if getattr(builtins, name, None) is func:
        return name
    if _is_from_flambeau(func):
        path = _flambeau_path(func)
        if path is not None:
            return path
    module = getattr(func, "__module__", None)
    if module is None:  # defined in a namespace without __name__ (exec'd code)
        return name
    if module == "_operator":
        module = "operator"
    return f"{module}.{getattr(func, '__qualname__', name) if isinstance(func, type) else name}"


def _type_repr(obj) -> str:
    """A short repr of a type annotation (``flambeau.Tensor``, ``int``)."""
    if isinstance(obj, type) and not isinstance(obj, types.GenericAlias):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg, max_list_len: float = float("inf")) -> str:
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        comma = "," if len(arg) == 1 else ""
        return f"({items}{comma}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


# ---- Node ---------------------------------------------------------------------------------------


class Node:
    """One operation of a :class:`~flambeau.fx.Graph`. ``op`` says what it does:

    - ``placeholder``: an input of the function; ``target`` is the parameter's name and
      ``args`` holds its default value, if any.
    - ``get_attr``: fetches a parameter, buffer or submodule; ``target`` is its dotted
      name in the module hierarchy.
    - ``call_function``: calls ``target`` (a Python callable) with ``args`` / ``kwargs``.
    - ``call_module``: calls the submodule named ``target`` (``args`` without ``self``).
    - ``call_method``: calls the method named ``target`` on ``args[0]``.
    - ``output``: the function returns ``args[0]``.

    Nodes form a doubly linked list in graph order (``prev`` / ``next``); ``users`` are
    the nodes that take this one as an argument. Assigning ``args`` or ``kwargs`` keeps
    ``users`` up to date.

    >>> import flambeau.fx as fx
    >>> def f(x):
    ...     return flambeau.relu(x) + 1
    >>> gm = fx.symbolic_trace(f)
    >>> [n.op for n in gm.graph.nodes]
    ['placeholder', 'call_function', 'call_function', 'output']
    >>> [n.name for n in gm.graph.nodes]
    ['x', 'relu', 'add', 'output']
    >>> relu = gm.graph.find_nodes(op="call_function", target=flambeau.relu)[0]
    >>> relu.args, list(relu.users)
    ((x,), [add])
    """

    def __init__(self, graph, name: str, op: str, target, args, kwargs, return_type=None):
        if op == "call_function":
            if not callable(target):
                raise ValueError(
                    f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                    f"{flambeau.typename(target)} but a Callable is expected"
                )
        else:
            if op not in _legal_ops:
                raise AssertionError(f"op '{op}' is not in _legal_ops")
            if not isinstance(target, str):
                raise ValueError(
                    f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                    f"{flambeau.typename(target)} but a str is expected"
                )
        d = self.__dict__
        d["graph"] = graph
        d["name"] = name
        d["op"] = op
        d["target"] = target
        d["type"] = return_type
        d["_input_nodes"] = {}
        d["users"] = {}
        d["_args"] = ()
        d["_kwargs"] = immutable_dict()
        d["_prev"] = self
        d["_next"] = self
        d["_erased"] = False
        d["_repr_fn"] = None
        d["meta"] = {}
        self._update_args_kwargs(args, kwargs)

    def __setattr__(self, name: str, value) -> None:
        # Changing what a node is keeps Graph.find_nodes' table in step.
        table = None
        if name in ("op", "target") and not self._erased:
            table = getattr(self.graph, "_find_nodes_lookup_table", None)
            if table is not None and self in table:
                table.remove(self)
            else:
                table = None
        object.__setattr__(self, name, value)
        if table is not None:
            table.insert(self)

    # ---- the linked list ----------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The next node in the graph (the graph's root sentinel after the last one)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Moves ``x`` (a node of the same graph) to just before this node."""
        if self is x:
            warnings.warn(
                "Trying to prepend a node to itself. This behavior has no effect on the graph.",
                stacklevel=2,
            )
            return
        x._remove_from_list()
        p = self._prev
        object.__setattr__(p, "_next", x)
        object.__setattr__(x, "_prev", p)
        object.__setattr__(x, "_next", self)
        object.__setattr__(self, "_prev", x)

    def append(self, x: Node) -> None:
        """Moves ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        object.__setattr__(p, "_next", n)
        object.__setattr__(n, "_prev", p)

    # ---- arguments ----------------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The positional arguments; assigning them updates ``users`` of the nodes in them."""
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments; assigning them updates ``users`` as ``args`` does."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The nodes among ``args`` and ``kwargs``, each once, in order."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, new_args, new_kwargs) -> None:
        d = self.__dict__
        d["_args"] = map_aggregate(tuple(new_args), lambda x: x)
        d["_kwargs"] = map_aggregate(dict(new_kwargs), lambda x: x)
        for old in self._input_nodes:
            old.users.pop(self, None)
        inputs: dict = {}
        map_arg(self._args, inputs.setdefault)
        map_arg(self._kwargs, inputs.setdefault)
        d["_input_nodes"] = inputs
        for new in inputs:
            new.users.setdefault(self)

    def update_arg(self, idx: int, arg) -> None:
        """Sets ``args[idx]`` to ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg) -> None:
        """Inserts ``arg`` at position ``idx`` of ``args``."""
        if not 0 <= idx <= len(self.args):
            raise AssertionError("insert_args index must be between 0 and len(self.args)")
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key: str, arg) -> None:
        """Sets ``kwargs[key]`` to ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _replace_input_with(self, old_input: Node, new_input: Node) -> None:
        def swap(n):
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Replaces every occurrence of ``old_input`` in this node's arguments."""
        self._replace_input_with(old_input, new_input)

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb=None, *,
                              propagate_meta: bool = False) -> list:  # fmt: skip
        """Makes every user of this node use ``replace_with`` instead; ``delete_user_cb(user)``
        returning False keeps that user as it is. Returns the users changed.

        With ``propagate_meta``, ``replace_with`` (whose ``meta`` must be empty) gets this
        node's ``meta``.
        """
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                    "but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            changed.append(user)
            user._replace_input_with(self, replace_with)
        return changed

    # ---- properties ---------------------------------------------------------------------

    @property
    def stack_trace(self) -> str | None:
        """The stack trace recorded while tracing, if any (``meta["stack_trace"]``)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace) -> None:
        self.meta["stack_trace"] = trace

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node: placeholders and outputs,
        calls of side-effectful or random functions, and calls of modules whose
        ``_is_impure`` is true."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            if self.graph.owning_module is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            target = self.graph.owning_module.get_submodule(self.target)
            return bool(getattr(target, "_is_impure", False))
        if self.op == "call_function":
            try:
                return self.target in _side_effectful_functions or (
                    impure_random and self.target in _random_functions
                )
            except TypeError:  # an unhashable callable
                return False
        return False

    # ---- printing -----------------------------------------------------------------------

    def __repr__(self) -> str:
        if self._repr_fn is not None:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target) -> str:
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None)
        if name is not None and module == "builtins":
            return f"builtins.{name}"
        if name is not None and module == "_operator":
            return f"operator.{name}"
        return _get_qualified_name(target)

    def format_node(self, placeholder_names: list | None = None,
                    maybe_return_typename: list | None = None) -> str | None:  # fmt: skip
        """A line describing the node, as ``print(graph)`` shows it.

        >>> import flambeau.fx as fx
        >>> gm = fx.symbolic_trace(lambda x: x * 2)
        >>> print(list(gm.graph.nodes)[1].format_node())
        %mul : [num_users=1] = call_function[target=operator.mul](args = (%x, 2), kwargs = {})
        """
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            typename = f"{_type_repr(self.type)} " if self.type else ""
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (
                f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self.target}]{default}"
            )
        if self.op == "get_attr":
            typename = f"{_type_repr(self.type)} " if self.type is not None else ""
            return (
                f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]"
            )
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        return (
            f"%{self.name} : {typename}[num_users={len(self.users)}] = "
            f"{self.op}[target={self._pretty_print_target(self.target)}]("
            f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )


# ---- walking arguments ----------------------------------------------------------------------


# Documented (and pickled) as flambeau.fx.Node: annotations naming it then point at that
# entry, not at one of the several classes named Node (flambeau.autograd.Node too).
Node.__module__ = "flambeau.fx"


def map_arg(a, fn):
    """Applies ``fn`` to each Node in ``a`` (nested tuples, lists, dicts and slices), and
    returns ``a`` rebuilt with the results.

    >>> import flambeau.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder("x")
    >>> fx.map_arg((x, [x, 3]), lambda n: n.name)
    ('x', ['x', 3])
    """
    if not callable(fn):
        raise AssertionError("flambeau.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """Applies ``fn`` to each leaf of ``a`` (nested tuples, lists, dicts and slices) and
    returns ``a`` rebuilt with the results; lists and dicts come back as
    ``immutable_list`` / ``immutable_dict``, named tuples as their own type.

    >>> from flambeau.fx.node import map_aggregate
    >>> map_aggregate({"a": (1, [2, 3])}, lambda v: v * 10)
    {'a': (10, [20, 30])}
    """
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return immutable_list(map_aggregate(x, fn) for x in a)
    if isinstance(a, dict):
        out = immutable_dict()
        for k, v in a.items():
            dict.__setitem__(out, k, map_aggregate(v, fn))
        return out
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))  # fmt: skip
    return fn(a)
