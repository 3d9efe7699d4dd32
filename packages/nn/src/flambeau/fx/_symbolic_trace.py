"""Symbolic tracing: ``Tracer``, ``symbolic_trace`` and ``wrap`` (``torch.fx._symbolic_trace``).

A traced function runs once with :class:`Proxy` objects for its inputs. While it runs,
``Module.__call__`` and ``Module.__getattr__`` are patched so that calls of leaf modules
become ``call_module`` nodes and parameter reads ``get_attr`` nodes, and the functions
registered with :func:`wrap` (and flambeau's own functions written in Python, which the
core's ``__torch_function__`` dispatch does not reach) are patched to record a
``call_function`` node when they receive a Proxy.
"""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
import types
import warnings

import flambeau
from flambeau.nn import Module

from .graph import Graph
from .graph_module import GraphModule
from .node import _side_effectful_functions, base_types, map_aggregate
from .proxy import ParameterProxy, Proxy, Scope, ScopeContextManager, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "ProxyableClassMeta",
           "is_fx_tracing"]  # fmt: skip

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_is_fx_tracing_flag = False
_proxyable_classes: dict = {}
# The originals, taken before any trace patches them (traces may nest).
_orig_module_call = Module.__call__
_orig_module_getattr = Module.__getattr__


def _nn():
    import flambeau.nn as nn

    return nn


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running (a program may take another path then).

    >>> from flambeau.fx._symbolic_trace import is_fx_tracing
    >>> is_fx_tracing()
    False
    """
    return _is_fx_tracing_flag


class ProxyableClassMeta(type):
    """A metaclass whose classes' construction is recorded while tracing (as a
    ``call_function`` node on the class) when a Proxy is among the arguments.

    >>> import flambeau.fx as fx
    >>> class Pair(metaclass=fx.ProxyableClassMeta):
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> def f(x):
    ...     return Pair(x, x)
    >>> [n.op for n in fx.symbolic_trace(f).graph.nodes]
    ['placeholder', 'call_function', 'output']
    """

    def __init__(cls, name, bases, attrs):
        _proxyable_classes.setdefault(cls)
        super().__init__(name, bases, attrs)

    def __call__(cls, *args, **kwargs):
        instance = cls.__new__(cls)
        if not is_fx_tracing():
            cls.__init__(instance, *args, **kwargs)
            return instance
        found = []

        def check(a):
            if isinstance(a, Proxy):
                found.append(a)

        map_aggregate(args, check)
        map_aggregate(kwargs, check)
        if found:
            return found[0].tracer.create_proxy("call_function", cls, args, kwargs)
        cls.__init__(instance, *args, **kwargs)
        return instance


class PHBase:
    """An input left unspecialized in ``concrete_args``: tracing makes a placeholder for
    it (named after the parameter, with a ``_1`` suffix).

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x, y: x + y, concrete_args={"y": fx.PH})
    >>> [n.name for n in gm.graph.nodes]
    ['x', 'y_1', 'add', 'output']
    """

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _transfer_attrs(fr, to) -> None:
    for attr_name in dir(fr):
        attr_val = getattr(fr, attr_name)
        if not callable(attr_val) and not attr_name.startswith("__") and not hasattr(to, attr_name):
            setattr(to, attr_name, attr_val)


def _patch_function(fn: types.FunctionType, nargs: int) -> types.FunctionType:
    """fn taking its ``*args`` / ``**kwargs`` (and keyword-only parameters) as plain
    positional parameters, so that one placeholder can stand for each."""
    co = fn.__code__
    new_code = co.replace(
        co_argcount=nargs,
        co_posonlyargcount=0,
        co_kwonlyargcount=0,
        co_flags=co.co_flags & ~HAS_VARSTUFF,
    )
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)  # fmt: skip


# ---- patching -------------------------------------------------------------------------------


class _Patcher:
    """Replaces functions in dicts and classes until exit (or revert_all_patches)."""

    def __init__(self):
        self.patches_made: list = []
        self.visited: set = set()

    def patch(self, frame_dict: dict, name: str, new_fn, deduplicate: bool = True) -> None:
        new_fn.__fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches_made.append(("del", frame_dict, name, None, new_fn))
            frame_dict[name] = new_fn
        elif getattr(frame_dict[name], "__fx_already_patched", False):
            return
        else:
            self.patches_made.append(("item", frame_dict, name, frame_dict[name], new_fn))
            frame_dict[name] = new_fn

    def patch_method(self, cls: type, name: str, new_fn, deduplicate: bool = True) -> None:
        new_fn.__fx_already_patched = deduplicate
        orig_fn = cls.__dict__.get(name, getattr(cls, name))
        if getattr(orig_fn, "__fx_already_patched", False):
            return
        self.patches_made.append(("attr", cls, name, orig_fn, new_fn))
        setattr(cls, name, new_fn)

    def visit_once(self, thing) -> bool:
        idx = id(thing)
        if idx in self.visited:
            return False
        self.visited.add(idx)
        return True

    @staticmethod
    def _revert(patch) -> None:
        kind, where, name, orig, _ = patch
        if kind == "del":
            where.pop(name, None)
        elif kind == "item":
            where[name] = orig
        else:
            setattr(where, name, orig)

    @staticmethod
    def _apply(patch) -> None:
        kind, where, name, _, new = patch
        if kind == "attr":
            setattr(where, name, new)
        else:
            where[name] = new

    def revert_all_patches(self) -> list:
        for patch in reversed(self.patches_made):
            self._revert(patch)
        return self.patches_made

    def reapply_all_patches(self) -> list:
        for patch in self.patches_made:
            self._apply(patch)
        return self.patches_made

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches_made:
            self._revert(self.patches_made.pop())
        self.visited.clear()


# (id(globals dict), function name) -> globals dict: the functions wrap() registered.
_wrapped_fns_to_patch: dict = {}
# (class, method name): methods recorded as call_method leaves.
_wrapped_methods_to_patch: list = []


def _find_proxy(*objects):
    found = None

    def find(x):
        nonlocal found
        if isinstance(x, Proxy):
            found = x

    map_aggregate(objects, find)
    return found


def _create_wrapped_func(orig_fn, is_wrapped: bool = True):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            result = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            if is_wrapped:
                result.node.meta["is_wrapped"] = True
            return result
        return orig_fn(*args, **kwargs)

    return wrapped


def _create_wrapped_method(cls, name: str):
    orig_fn = getattr(cls, name)

    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_method", name, args, kwargs)
        return orig_fn(*args, **kwargs)

    return wrapped


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        elif name in frame_dict:
            orig_fn = frame_dict[name]
        else:
            continue  # that namespace no longer defines it (a cleared doctest namespace)
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))
    for cls, name in _wrapped_methods_to_patch:
        patcher.patch_method(cls, name, _create_wrapped_method(cls, name))


def _autowrap_check(patcher: _Patcher, frame_dict: dict, function_ids: set,
                    is_wrapped: bool = True) -> None:  # fmt: skip
    """Patches the functions of ``frame_dict`` whose ids are in ``function_ids``."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value, is_wrapped))


# flambeau's public functions written in Python (the core's own dispatch to
# __torch_function__ covers its compiled operators): computed on first use.
_flambeau_python_fns: tuple | None = None
_NOT_RECORDED = frozenset({
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "handle_torch_function", "boolean_dispatch",
})  # fmt: skip


def _flambeau_python_functions() -> tuple:
    """(ids, modules): the public functions written in Python of flambeau and
    flambeau.nn.functional that take tensors (not among flambeau.overrides'
    ``get_ignored_functions``), and those two modules."""
    global _flambeau_python_fns
    if _flambeau_python_fns is None:
        import flambeau.nn.functional as F

        try:
            ignored = flambeau.overrides.get_ignored_functions()
        except Exception:  # the tables are optional here
            ignored = set()
        ids: set = set()
        for module, names in ((flambeau, dir(flambeau)), (F, getattr(F, "__all__", ()))):
            for name in names:
                fn = module.__dict__.get(name)
                if (
                    isinstance(fn, types.FunctionType)
                    and not name.startswith("_")
                    and name not in _NOT_RECORDED
                    and fn not in ignored
                    and (fn.__module__ or "").startswith("flambeau")
                ):
                    ids.add(id(fn))
        _flambeau_python_fns = (frozenset(ids), (F, flambeau))
    return _flambeau_python_fns


def wrap(fn_or_name):
    """Registers a module-level function (or its name) as a leaf of tracing: calls of it
    with traced values become ``call_function`` nodes instead of being traced through.
    Call it at the top level of the module that defines or uses the function; it also
    decorates.

    >>> import flambeau.fx as fx
    >>> def clamp_sum(x, y):  # control flow on values: not traceable as it is
    ...     return x + y if len(x) > 1 else x
    >>> _ = fx.wrap("clamp_sum")
    >>> def f(a, b):
    ...     return clamp_sum(a, b) * 2
    >>> gm = fx.symbolic_trace(f)
    >>> [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is clamp_sum
    True
    >>> gm(flambeau.ones(2), flambeau.ones(2))
    tensor([4., 4.])
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError(
            "Unsupported type for global function! Must be either a callable or string name"
        )
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


def _assert_is_none(value, msg: str) -> None:
    if value is not None:
        raise AssertionError(msg)


# flambeau._assert (torch._assert) checks a concrete_args specialization; it has effects.
_side_effectful_functions.add(flambeau._assert)


# ---- Tracer ---------------------------------------------------------------------------------


class Tracer(TracerBase):
    """Records a graph by running a module's ``forward`` (or a function) on proxies.
    ``symbolic_trace(m)`` is ``GraphModule(m, Tracer().trace(m))``; subclasses change
    what is a leaf (``is_leaf_module``), how calls of modules are recorded
    (``call_module``), how attribute reads are (``getattr``) and how values become node
    arguments (``create_arg``).

    ``autowrap_modules``: modules whose functions are recorded as leaves (``math``);
    ``autowrap_functions``: functions recorded as leaves; ``param_shapes_constant``:
    parameters' shapes are constants while tracing (see :class:`ParameterProxy`).

    >>> import flambeau.fx as fx
    >>> class Block(flambeau.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = flambeau.nn.Linear(4, 4)
    ...     def forward(self, x):
    ...         return flambeau.relu(self.fc(x))
    >>> class Net(flambeau.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.block = Block()
    ...     def forward(self, x):
    ...         return self.block(x) + x
    >>> class KeepBlocks(fx.Tracer):
    ...     def is_leaf_module(self, m, qualname):
    ...         return isinstance(m, Block) or super().is_leaf_module(m, qualname)
    >>> [(n.op, n.target) for n in KeepBlocks().trace(Net()).nodes][:2]
    [('placeholder', 'x'), ('call_module', 'block')]
    >>> [(n.op, n.name) for n in fx.Tracer().trace(Net()).nodes][1:4]
    [('call_module', 'block_fc'), ('call_function', 'relu'), ('call_function', 'add')]
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant: bool = False):  # fmt: skip
        super().__init__()
        self._autowrap_function_ids = {
            id(value)
            for m in autowrap_modules
            for name, value in m.__dict__.items()
            if not name.startswith("_") and callable(value)
        }
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.num_calls: dict = {}
        self.node_name_to_scope = {}

    _qualname_counter: dict = collections.defaultdict(int)

    def get_fresh_qualname(self, prefix: str) -> str:
        """An attribute name starting with ``prefix`` that the root does not have yet."""
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    def create_arg(self, a):
        """As ``TracerBase.create_arg``, and: parameters, buffers and submodules of the
        root become ``get_attr`` nodes; other tensors are stored on the root as
        ``_tensor_constant<N>`` and fetched by a ``get_attr`` node."""
        nn = _nn()
        if isinstance(a, nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, flambeau.Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        elif isinstance(a, nn.Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(e) for e in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, flambeau.Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if type(a) in _proxyable_classes:
            qualname = self.get_fresh_qualname(f"_{a.__class__.__name__}_constant_")
            setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """Whether calls of ``m`` are recorded as ``call_module`` nodes (not traced
        through): by default the modules of flambeau.nn, except the containers."""
        nn = _nn()
        return (
            m.__module__.startswith("flambeau.nn") or m.__module__.startswith("flambeau.ao.nn")
        ) and not isinstance(m, (nn.Sequential, nn.ModuleList, nn.ModuleDict))

    def path_of_module(self, mod) -> str:
        """The dotted path of ``mod`` within the root (NameError if it is not in it)."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A call of module ``m``: a ``call_module`` node for a leaf, otherwise its
        ``forward`` traced through."""
        module_qualified_name = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))) as scope:
            num_calls = self.num_calls.get(module_qualified_name, 0)
            key = f"{scope.module_path}@{num_calls}" if num_calls > 0 else scope.module_path
            self.module_stack[key] = (module_qualified_name, scope.module_type)
            self.num_calls[module_qualified_name] = num_calls + 1
            try:
                if not self.is_leaf_module(m, module_qualified_name):
                    ret_val = forward(*args, **kwargs)
                else:
                    ret_val = self.create_proxy("call_module", module_qualified_name, args, kwargs)
            finally:
                self.module_stack.pop(key, None)
        return ret_val

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        """The value of a module attribute read while tracing: a (cached) ``get_attr``
        Proxy for a parameter of the root (and a buffer with ``proxy_buffer_attributes``),
        the value itself otherwise."""

        def proxy_for(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        kwargs = {}
                        if "proxy_factory_fn" in inspect.signature(self.create_proxy).parameters:
                            kwargs["proxy_factory_fn"] = (
                                functools.partial(ParameterProxy, self, name=n, param=attr_val)
                                if self.param_shapes_constant
                                else None
                            )
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, **kwargs
                        )
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, _nn().Parameter):
            found = proxy_for(self.root.named_parameters())
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, flambeau.Tensor):
            found = proxy_for(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def create_args_for_root(self, root_fn, is_module: bool, concrete_args=None):
        """The placeholders for ``root_fn``'s parameters (and ``root_fn`` adapted to take
        ``*args`` / ``**kwargs`` as one placeholder each)."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args: list = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        if (
            isinstance(concrete_args, tuple)
            and len(concrete_args) > 0
            and (co.co_flags & HAS_VARSTUFF)
            and total_args == 1
        ):
            for i, concrete_arg in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{i}", (), {})
                if isinstance(concrete_arg, PHBase) and concrete_arg is not PH:
                    _transfer_attrs(fr=concrete_arg, to=out.node)
                args.append(out)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(
                    f"Tracing expected {len(arg_names)} arguments but got "
                    f"{len(concrete_args)} concrete arguments"
                )
            concrete_args = dict(zip(arg_names, concrete_args))

        def proxy_placeholder(name: str):
            return self._proxy_placeholder(name, concrete_args, sig, fn_for_analysis)

        args.extend(proxy_placeholder(name) for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(proxy_placeholder("*" + next(names_iter)))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(proxy_placeholder("**" + next(names_iter)))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name: str, concrete_args, sig, fn_for_analysis):
        if concrete_args is not None and name in concrete_args:
            x = concrete_args[name]
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if isinstance(x, PHBase):
                if x is not PH:
                    _transfer_attrs(fr=x, to=out.node)
                return out
            if type(x) is bool or (type(x) in base_types and type(x) is not flambeau.Tensor):
                msg = f"{name} has been specialized to have value {x} but got another value"
                self.create_proxy("call_function", flambeau._assert, (out == x, msg), {})
            elif x is None:
                msg = f"{name} has been specialized to have value None but got another value"
                self.create_proxy("call_function", _assert_is_none, (out, msg), {})
            else:
                warnings.warn(
                    f"Was not able to add assertion to guarantee correct input {name} to "
                    "specialized function. It is up to the user to make sure that your inputs "
                    "match the inputs you specialized the function with.",
                    stacklevel=3,
                )
            return x
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy(
            "placeholder", name, default, {},
            type_expr=fn_for_analysis.__annotations__.get(name, None),
        )  # fmt: skip

    def trace(self, root, concrete_args=None) -> Graph:
        """Traces ``root`` (a Module, whose ``forward`` runs, or a function) and returns
        the graph. ``concrete_args`` (a dict by parameter name, or a tuple) fixes some
        inputs to constants: the graph asserts they are passed unchanged."""
        global _is_fx_tracing_flag
        nn = _nn()
        old_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, nn.Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise AssertionError(
                        f"traced_func_name={self.traced_func_name} doesn't exist in "
                        f"{type(root).__name__}"
                    )
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = nn.Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            if hasattr(fn, "__code__"):
                code = fn.__code__
                self.graph._co_fields = {
                    "co_name": code.co_name,
                    "co_filename": code.co_filename,
                    "co_firstlineno": code.co_firstlineno,
                }
            self.tensor_attrs: dict = {}

            def collect_tensor_attrs(m, prefix_atoms: list) -> None:
                for k, v in m.__dict__.items():
                    if isinstance(v, flambeau.Tensor):
                        self.tensor_attrs[v] = ".".join(prefix_atoms + [k])
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix_atoms + [k])

            collect_tensor_attrs(self.root, [])
            if not isinstance(fn, types.FunctionType):
                raise AssertionError(f"Expected FunctionType, got {type(fn)}")
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, nn.Module), concrete_args)

            parameter_proxy_cache: dict = {}
            orig_getattr = _orig_module_getattr
            orig_call = _orig_module_call
            flambeau_ids, flambeau_modules = _flambeau_python_functions()

            @functools.wraps(orig_getattr)
            def module_getattr_wrapper(mod, attr):
                attr_val = orig_getattr(mod, attr)
                return self.getattr(attr, attr_val, parameter_proxy_cache)

            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)

                fwd_globals = getattr(getattr(mod, "forward", mod), "__globals__", {})
                _autowrap_check(patcher, fwd_globals, self._autowrap_function_ids)
                _autowrap_check(flambeau_patcher, fwd_globals, flambeau_ids, is_wrapped=False)
                return self.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher, _Patcher() as flambeau_patcher:
                patcher.patch_method(nn.Module, "__getattr__", module_getattr_wrapper,
                                     deduplicate=False)  # fmt: skip
                patcher.patch_method(nn.Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                _autowrap_check(flambeau_patcher, fn_globals, flambeau_ids, is_wrapped=False)
                for module in flambeau_modules:
                    _autowrap_check(
                        flambeau_patcher, module.__dict__, flambeau_ids, is_wrapped=False
                    )
                result = fn(*args)
                self.create_node(
                    "output", "output", (self.create_arg(result),), {},
                    type_expr=getattr(inspect.unwrap(fn), "__annotations__", {}).get("return"),
                )  # fmt: skip
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph


def symbolic_trace(root, concrete_args=None) -> GraphModule:
    """Traces ``root`` (a Module or a function) into a :class:`GraphModule` that runs the
    recorded operations. ``concrete_args`` fixes some inputs (by parameter name) to
    constants, to trace past control flow on them.

    >>> import flambeau.fx as fx
    >>> class MLP(flambeau.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = flambeau.nn.Linear(4, 8)
    ...         self.fc2 = flambeau.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(flambeau.relu(self.fc1(x)))
    >>> gm = fx.symbolic_trace(MLP())
    >>> print(gm.code.strip())
    def forward(self, x):
        fc1 = self.fc1(x);  x = None
        relu = flambeau.relu(fc1);  fc1 = None
        fc2 = self.fc2(relu);  relu = None
        return fc2
    >>> def f(x, double):
    ...     return x * 2 if double else x
    >>> g = fx.symbolic_trace(f, concrete_args={"double": True})
    >>> g(flambeau.tensor([1.0, 2.0]), True)
    tensor([2., 4.])
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, _nn().Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
