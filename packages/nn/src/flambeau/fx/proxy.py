"""``Proxy``: the stand-in values that record operations into a graph while tracing
(``torch.fx.proxy``)."""

from __future__ import annotations

import collections
import copy
import dataclasses
import dis
import enum
import inspect
import logging
import operator
import types

import flambeau

from .graph import Graph, magic_methods, reflectable_magic_methods
from .node import Node, base_types, map_aggregate, map_arg

__all__ = [
    "TracerBase",
    "GraphAppendingTracer",
    "TraceError",
    "Proxy",
    "Attribute",
    "ParameterProxy",
    "Scope",
    "ScopeContextManager",
]

log = logging.getLogger(__name__)

# Callables may be passed as arguments (an activation handed to a function): generated
# code names them as globals.
_callable_constant_types = (types.FunctionType, types.BuiltinFunctionType, type)


class Scope:
    """The module a node was recorded in: its dotted path and type.

    >>> from flambeau.fx.proxy import Scope
    >>> s = Scope("layer1.conv", flambeau.nn.Conv2d)
    >>> s.module_path, s.module_type.__name__
    ('layer1.conv', 'Conv2d')
    """

    def __init__(self, module_path: str, module_type):
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Sets a tracer's scope to a new one while entered, restoring the previous one.

    >>> from flambeau.fx.proxy import Scope, ScopeContextManager
    >>> outer = Scope("", None)
    >>> with ScopeContextManager(outer, Scope("fc", flambeau.nn.Linear)) as inner:
    ...     outer.module_path
    'fc'
    >>> outer.module_path
    ''
    """

    def __init__(self, scope: Scope, current_scope: Scope):
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


class TraceError(ValueError):
    """Raised when tracing meets a value-dependent operation it cannot record (control
    flow on a traced value, iterating over one).

    >>> import flambeau.fx as fx
    >>> def f(x):
    ...     return x if x.sum() > 0 else -x
    >>> fx.symbolic_trace(f)
    Traceback (most recent call last):
    flambeau.fx.proxy.TraceError: symbolically traced variables cannot be used as inputs ...
    """


class TracerBase:
    """What every tracer does: create nodes (``create_node``), wrap them in proxies
    (``create_proxy``, ``proxy``) and turn the values a traced program passes to
    operations into node arguments (``create_arg``).

    >>> import flambeau.fx as fx
    >>> from flambeau.fx.proxy import GraphAppendingTracer
    >>> g = fx.Graph()
    >>> tracer = GraphAppendingTracer(g)
    >>> x = tracer.create_proxy("placeholder", "x", (), {})
    >>> isinstance(tracer, fx.proxy.TracerBase), (x * 2).node.op
    (True, 'call_function')
    """

    graph: Graph
    record_stack_traces: bool = False
    check_mutable_operations: bool = False
    trace_asserts: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"
    scope: Scope
    module_stack: collections.OrderedDict
    node_name_to_scope: dict

    def create_node(self, kind: str, target, args, kwargs, name=None, type_expr=None) -> Node:
        """Creates a node in ``self.graph``; override to check or change nodes."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        self.node_name_to_scope[node.name] = (self.scope.module_path, self.scope.module_type)
        if self.module_stack:
            node.meta["nn_module_stack"] = copy.copy(self.module_stack)
        if self.record_stack_traces and not node.stack_trace:
            import traceback

            frames = [f for f in traceback.extract_stack() if "flambeau/fx/" not in f.filename]
            if frames:
                node.stack_trace = "".join(traceback.format_list(frames)).strip()
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None) -> Proxy:  # fmt: skip
        """Creates a node from traced values (``create_arg`` turns them into node
        arguments) and returns its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError(f"Expected args_ to be tuple, got {type(args_)}")
        if not isinstance(kwargs_, dict):
            raise AssertionError(f"Expected kwargs_ to be dict, got {type(kwargs_)}")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if not proxy_factory_fn else proxy_factory_fn(node)

    def create_arg(self, a):
        """A traced value as a node argument: proxies become their nodes, containers are
        converted element by element, constants stay; NotImplementedError otherwise."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(type(a), "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(e) for e in a]
            if hasattr(a, "_fields"):
                return type(a)(*items)
            if type(a) is not tuple and not all(isinstance(i, int) for i in items):
                return tuple(items)  # a flambeau.Size of traced sizes
            return type(a)(items)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if not isinstance(k, str):
                    k = self.create_arg(k)

                    def no_nodes(arg):
                        raise RuntimeError(
                            "Keys for dictionaries used as an argument cannot contain a "
                            f"Node. Got key: {arg}"
                        )

                    map_arg(k, no_nodes)
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))  # fmt: skip
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))  # fmt: skip
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            kwargs = {f.name: self.create_arg(getattr(a, f.name)) for f in dataclasses.fields(a)}
            return self.create_node("call_function", a.__class__, (), kwargs)
        if isinstance(a, (*base_types, enum.Enum)) or a is None or a is ...:
            return a
        if isinstance(a, _callable_constant_types):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called for ``bool(proxy)`` (control flow on a traced value): raises TraceError;
        a tracer that knows the value may return it."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy):
        """Called when a proxy is iterated over: raises TraceError."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used "
            "in a loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can "
            "be traced, and check out the Proxy docstring for help troubleshooting Proxy "
            "iteration errors"
        )

    def keys(self, obj: Proxy) -> Proxy:
        """Called for ``proxy.keys()`` (``**proxy``): records a ``keys`` method call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph: what a :class:`Proxy` made from a
    bare Node uses.

    >>> import flambeau.fx as fx
    >>> g = fx.Graph()
    >>> x = fx.Proxy(g.placeholder("x"))
    >>> _ = g.output((x.relu() + 1).node)
    >>> print(fx.GraphModule(flambeau.nn.Module(), g).code.strip())
    def forward(self, x):
        relu = x.relu();  x = None
        add = relu + 1;  relu = None
        return add
    """

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


def _find_tracer(args, kwargs):
    tracers: dict = {}

    def find(a):
        if isinstance(a, Proxy):
            tracers[a.tracer] = None

    map_aggregate(args, find)
    map_aggregate(kwargs, find)
    return tracers


class Proxy:
    """Stands for a value while tracing: each operation on it (operators, method calls,
    attribute reads, flambeau functions through ``__torch_function__``) records a node
    into the tracer's graph and returns a new Proxy.

    Proxies cannot be used in control flow (``bool(proxy)``), iterated over (other
    than unpacked into a fixed number of names) or measured with ``len``: those raise
    :class:`~flambeau.fx.proxy.TraceError` or RuntimeError. Move such code into a
    function registered with :func:`~flambeau.fx.wrap`, or make the loop's length a
    constant.

    >>> import flambeau.fx as fx
    >>> g = fx.Graph()
    >>> x = fx.Proxy(g.placeholder("x"))
    >>> y = flambeau.relu(x) * 2
    >>> y
    Proxy(mul)
    >>> [n.name for n in g.nodes]
    ['x', 'relu', 'mul']
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # Recorded lazily: most attribute reads are method calls (see Attribute.__call__).
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo) -> Proxy:
        new = {}
        for k, v in self.__dict__.items():
            try:
                new[k] = copy.deepcopy(v, memo)
            except Exception:
                log.warning("Shallow copy %s of Proxy because it cannot be deepcopied.", k)
                new[k] = copy.copy(v)
        proxy = Proxy(new["node"], new["tracer"])
        proxy.__dict__.update(new)
        return proxy

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks into proxy[0], proxy[1]; any other iteration fails.
        frame = inspect.currentframe()
        calling = frame.f_back if frame is not None else None
        if calling is not None:
            for inst in dis.get_instructions(calling.f_code):
                if inst.offset == calling.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call "
            "to be recorded, please call flambeau.fx.wrap('len') at module scope"
        )

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None) -> Proxy:
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = _find_tracer(args, kwargs)
        if len(tracers) > 1:
            raise RuntimeError(
                f"Found multiple different tracers {list(tracers.keys())} while trying to "
                f"trace operations {orig_method}"
            )
        tracer = next(iter(tracers))
        if flambeau.overrides.is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy(
            "call_function", orig_method, args, kwargs,
            name=tracer.graph._target_to_str(orig_method.__name__),
        )  # fmt: skip


class Attribute(Proxy):
    """The Proxy of ``proxy.attr``: a ``getattr`` node, created only when the value is
    used, since ``proxy.method(...)`` records a single ``call_method`` node instead.

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: x.view(x.shape[0], -1))
    >>> print(gm.code.strip())
    def forward(self, x):
        getattr_1 = x.shape
        getitem = getattr_1[0];  getattr_1 = None
        view = x.view(getitem, -1);  x = getitem = None
        return view
    """

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """The Proxy of a parameter when the tracer's ``param_shapes_constant`` is set: its
    shape, size, dim, ndim, numel and nelement are the parameter's own (constants, so
    they may steer control flow).

    >>> import flambeau.fx as fx
    >>> class M(flambeau.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = flambeau.nn.Parameter(flambeau.ones(3))
    ...     def forward(self, x):
    ...         return x * self.w if self.w.shape[0] == 3 else x
    >>> graph = fx.Tracer(param_shapes_constant=True).trace(M())
    >>> [n.op for n in graph.nodes]
    ['placeholder', 'get_attr', 'call_function', 'output']
    """

    def __init__(self, tracer: TracerBase, node: Node, name: str, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, *args):
        return self.param.size(*args)

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _define_magic(method: str) -> None:
    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)

    name = f"__{method.strip('_')}__"
    impl.__name__ = impl.__qualname__ = name
    setattr(Proxy, name, impl)


# `tensor <op> proxy` reaches the proxy's reflected operator (flambeau's Tensor declines
# the operand): it is recorded as PyTorch records it, as the tensor's method.
_TENSOR_METHOD_OF = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "__floordiv__",
    "mod": "remainder", "pow": "pow", "matmul": "matmul", "and_": "__and__", "or_": "__or__",
    "xor": "__xor__", "lshift": "__lshift__", "rshift": "__rshift__",
}  # fmt: skip


def _define_reflectable(orig_method_name: str) -> None:
    name = f"__r{orig_method_name.strip('_')}__"
    method = _TENSOR_METHOD_OF.get(orig_method_name)

    def impl(self, rhs):
        if method is not None and isinstance(rhs, flambeau.Tensor):
            return self.tracer.create_proxy("call_method", method, (rhs, self), {})
        target = getattr(operator, orig_method_name)
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = impl.__qualname__ = name
    setattr(Proxy, name, impl)


for _method in magic_methods:
    _define_magic(_method)
for _method in reflectable_magic_methods:
    _define_reflectable(_method)
del _method
