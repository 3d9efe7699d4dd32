"""The ``__torch_function__`` protocol (PyTorch's ``torch.overrides``).

A Tensor subclass that defines ``__torch_function__(cls, func, types, args=(), kwargs=None)``
takes over every flambeau function and Tensor method called with one of its instances:
the core's bindings see such an argument and hand the call here, and the subclasses'
``__torch_function__`` run in PyTorch's order (subclasses before their bases, otherwise
left to right) until one returns something other than ``NotImplemented``.

``Tensor.__torch_function__`` itself runs the function with the protocol disabled and
returns results re-classed as the subclass, so a subclass that only adds methods keeps
its class through operations. A subclass that sets ``__torch_function__ =
_disabled_torch_function_impl`` (as ``nn.Parameter`` does) opts out: operations on it
run at full speed and return plain tensors.

Functions written in Python can take part with ``has_torch_function`` and
``handle_torch_function`` (or the ``wrap_torch_function`` decorator), as in PyTorch; an
override calls the function underneath, skipping one level of the protocol, with
``redispatch_function``. The tables ``get_overridable_functions``,
``get_ignored_functions``, ``get_testing_overrides`` and ``resolve_name`` are read from
flambeau's operators (flambeau/_override_tables.py).

A ``TorchFunctionMode`` entered as a context manager takes every call on its thread,
tensors or not (factories included): the innermost mode's ``__torch_function__`` runs
first, with itself popped off the stack so that the calls it makes go to the modes
below it (or run), then the subclasses'.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings

from flambeau import _C
from flambeau._override_tables import (
    _WRAPPED_ALIASES,
    _WRAPPED_METHODS,
    _WRAPPED_PROPERTIES,
    get_default_nowrap_functions,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    resolve_name,
)

__all__ = [
    "BaseTorchFunctionMode",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "TorchFunctionMode",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "redispatch_function",
    "resolve_name",
    "wrap_torch_function",
]

Tensor = _C.Tensor

# Types whose instances never take part: Tensor and builtins (whose attributes cannot be
# set), looked at before anything else.
_PLAIN_TYPES = frozenset(
    {Tensor, type(None), bool, int, float, complex, str, bytes, list, tuple, dict, slice}
    | {type(Ellipsis), range, type(_C.float32), type(_C.device("cpu"))}
)

# How many modes are entered and redispatch_function skips pending, over all threads: while
# it is 0 (a process that uses neither), has_torch_function looks only at its arguments'
# types. A one-element list so that dispatching wrappers can read it without a lookup.
_active = [0]
_active_lock = threading.Lock()


def _count_active(delta: int) -> None:
    with _active_lock:
        _active[0] += delta


class _Disabling:
    """A context manager that raises one of this thread's disabling depths (_depth: the
    core's counter function) while it is entered."""

    _depth = None

    def __enter__(self):
        type(self)._depth(1)
        return self

    def __exit__(self, *exc):
        type(self)._depth(-1)
        return False


class DisableTorchFunctionSubclass(_Disabling):
    """Within it, subclasses' ``__torch_function__`` is not called (this thread).

    >>> class Sub(flambeau.Tensor):
    ...     __slots__ = ()
    >>> x = flambeau.ones(2).as_subclass(Sub)
    >>> type(x + 1).__name__
    'Sub'
    >>> with flambeau.overrides.DisableTorchFunctionSubclass():
    ...     print(type(x + 1).__name__)
    Tensor
    """

    _depth = staticmethod(_C._torch_function_disable)


class DisableTorchFunction(_Disabling):
    """Within it, neither subclasses' ``__torch_function__`` nor modes are called (this
    thread).

    >>> class Sub(flambeau.Tensor):
    ...     __slots__ = ()
    >>> x = flambeau.ones(2).as_subclass(Sub)
    >>> with flambeau.overrides.DisableTorchFunction():
    ...     print(type(x + 1).__name__)
    Tensor
    """

    _depth = staticmethod(_C._torch_function_all_disable)


# ---- modes ---------------------------------------------------------------------------


class _ModeStack(threading.local):
    def __init__(self):
        self.stack = []  # this thread's TorchFunctionMode stack, innermost last


_modes = _ModeStack()


def _get_current_function_mode_stack() -> list:
    """This thread's modes, outermost first."""
    return list(_modes.stack)


def _get_current_function_mode():
    """The innermost mode of this thread, or None."""
    stack = _modes.stack
    return stack[-1] if stack else None


def _push_mode(mode) -> None:
    _modes.stack.append(mode)
    _C._torch_function_mode_depth(1)
    _count_active(1)


def _pop_mode():
    stack = _modes.stack
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    _C._torch_function_mode_depth(-1)
    _count_active(-1)
    return stack.pop()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _is_torch_function_mode_enabled() -> bool:
    return _C._is_torch_function_mode_enabled()


class TorchFunctionMode:
    """A context manager that takes every flambeau function and Tensor method called on
    its thread while it is entered: subclasses define ``__torch_function__(self, func,
    types, args=(), kwargs=None)``. Modes nest; inside its ``__torch_function__`` a mode
    is off, so calling ``func`` runs it (or hands it to the next mode down).

    >>> from flambeau.overrides import TorchFunctionMode
    >>> class Log(TorchFunctionMode):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.calls = []
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         self.calls.append(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log() as log:
    ...     y = flambeau.ones(2) + 1
    >>> log.calls
    ['ones', 'add']
    """

    inner: TorchFunctionMode

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(
            f"{type(self).__name__} must define __torch_function__(self, func, types, args, kwargs)"
        )

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        """Deprecated: a new mode, to be entered with ``with``.

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     mode = flambeau.overrides.BaseTorchFunctionMode.push()
        >>> type(mode).__name__
        'BaseTorchFunctionMode'
        """
        warnings.warn(
            "`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
            stacklevel=2,
        )
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose ``__torch_function__`` runs the function: a base for modes that
    observe or adjust some calls and pass the rest through.

    >>> with flambeau.overrides.BaseTorchFunctionMode():
    ...     flambeau.ones(2).sum()
    tensor(2.)
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of subclasses that opt out of the protocol."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _overriding(t: type) -> bool:
    """Whether instances of t take part: a Tensor subclass (or any type) whose
    ``__torch_function__`` is neither Tensor's nor the disabled one."""
    if t in _PLAIN_TYPES:
        return False
    impl = getattr(t, "__torch_function__", None)
    if impl is None:
        return False
    return getattr(impl, "__func__", impl) is not _disabled_torch_function_impl


def is_tensor_like(inp) -> bool:
    """True for tensors and for anything whose type has ``__torch_function__``.

    >>> from flambeau.overrides import is_tensor_like
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__}"
    >>> is_tensor_like(flambeau.ones(2)), is_tensor_like([1.0]), is_tensor_like(Tagged())
    (True, False, True)
    """
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def _has_torch_function_slow(relevant_args) -> bool:
    """has_torch_function while a mode or a redispatch_function skip may be pending."""
    if _take_skip():
        return False  # redispatch_function: this check is the one level skipped
    if _C._is_torch_function_mode_enabled():
        return True
    return _C._torch_function_enabled() and any(_overriding(type(a)) for a in relevant_args)


def has_torch_function(relevant_args) -> bool:
    """Whether any argument takes part in the protocol (plain tensors do not).

    >>> from flambeau.overrides import has_torch_function
    >>> class Sub(flambeau.Tensor):
    ...     __slots__ = ()
    >>> x = flambeau.ones(2)
    >>> has_torch_function((x, 1.0)), has_torch_function((x, x.as_subclass(Sub)))
    (False, True)
    """
    if _active[0]:
        return _has_torch_function_slow(relevant_args)
    for a in relevant_args:
        t = type(a)
        if t is not Tensor and _overriding(t):
            return _C._torch_function_enabled()
    return False


def has_torch_function_unary(obj) -> bool:
    """has_torch_function for one argument.

    >>> from flambeau.overrides import handle_torch_function, has_torch_function_unary
    >>> def double(x):
    ...     if has_torch_function_unary(x):
    ...         return handle_torch_function(double, (x,), x)
    ...     return x * 2
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__}"
    >>> double(flambeau.ones(2)), double(Tagged())
    (tensor([2., 2.]), 'Tagged handled double')
    """
    if _active[0]:
        return _has_torch_function_slow((obj,))
    t = type(obj)
    return t is not Tensor and _overriding(t) and _C._torch_function_enabled()


def has_torch_function_variadic(*args) -> bool:
    """has_torch_function for the arguments themselves.

    >>> from flambeau.overrides import handle_torch_function, has_torch_function_variadic
    >>> def add(a, b):
    ...     if has_torch_function_variadic(a, b):
    ...         return handle_torch_function(add, (a, b), a, b)
    ...     return a + b
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__}"
    >>> add(flambeau.ones(2), 1), add(flambeau.ones(2), Tagged())
    (tensor([2., 2.]), 'Tagged handled add')
    """
    return has_torch_function(args)


def _overloaded_args(relevant_args) -> list:
    """One argument per overriding type, each subclass before its base classes."""
    out: list = []
    seen: set = set()
    for arg in relevant_args:
        t = type(arg)
        if t in seen or not _overriding(t):
            continue
        seen.add(t)
        at = len(out)
        for i, other in enumerate(out):
            if issubclass(t, type(other)):
                at = i
                break
        out.insert(at, arg)
    return out


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls ``__torch_function__(public_api, types, args, kwargs)`` of the overriding
    arguments in turn and returns the first result that is not NotImplemented;
    TypeError when every one declines.

    >>> from flambeau.overrides import handle_torch_function, has_torch_function
    >>> def double(x):
    ...     if has_torch_function((x,)):
    ...         return handle_torch_function(double, (x,), x)
    ...     return x * 2
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__}"
    >>> double(flambeau.ones(2)), double(Tagged())
    (tensor([2., 2.]), 'Tagged handled double')
    """
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if _C._is_torch_function_mode_enabled() and _get_current_function_mode() is not None:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if not _C._torch_function_enabled():
        overloaded = []  # within DisableTorchFunctionSubclass only modes take part
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__qualname__", None) or getattr(public_api, "__name__", "?")
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{list(types)}"
    )


def is_tensor_method_or_property(func) -> bool:
    """Whether func is a Tensor method or property (called with the tensor first).

    >>> from flambeau.overrides import is_tensor_method_or_property
    >>> is_tensor_method_or_property(flambeau.Tensor.add)
    True
    >>> is_tensor_method_or_property(flambeau.add)
    False
    """
    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func


def wrap_torch_function(dispatcher):
    """A decorator that makes a Python function take part in the protocol:
    ``dispatcher`` (called with the same arguments) returns the arguments to look at,
    and when one overrides ``__torch_function__`` (or a mode is on) the call goes there.

    >>> from flambeau.overrides import wrap_torch_function
    >>> def dispatcher(a):  # the function's own signature
    ...     return (a,)
    >>> @wrap_torch_function(dispatcher)
    ... def double(a):
    ...     return a * 2
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__}"
    >>> double(flambeau.ones(2)), double(Tagged())
    (tensor([2., 2.]), 'Tagged handled double')
    """

    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


# ---- making flambeau's own Python functions take part ---------------------------------


def _dispatch_on(
    *relevant: str, unless: str | None = None, method: str | None = None, name: str | None = None
):
    """A decorator that makes a public Python function take part in the protocol the way
    PyTorch's do (``if has_torch_function(...): return handle_torch_function(f, ...)``):
    ``relevant`` names the parameters looked at (a ``*args`` parameter stands for its
    items, as does ``"*name"`` for a parameter that takes a list of tensors). The function
    handed to ``__torch_function__`` is the decorated one, whose
    signature, name and docstring are the original's; ``unless`` is a condition on the
    arguments (an expression) under which the call runs without a check of its own, where
    PyTorch hands over another function (``return_indices`` and the ``*_with_indices``
    ones). ``method`` names the Tensor method that the function is installed as (its
    ``__name__`` becomes that, with ``__qualname__`` ``Tensor.<method>``, in ``flambeau``);
    ``name`` is the ``__name__`` PyTorch's function has where it differs (``linalg_cond``).

    The wrapper is compiled for the function's own signature, so that a call with plain
    tensors and no mode costs one type test per relevant argument and a call.

    >>> from flambeau.overrides import _dispatch_on
    >>> @_dispatch_on("a")
    ... def double(a, scale=2):
    ...     \"\"\"a * scale\"\"\"
    ...     return a * scale
    >>> class Tagged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"Tagged handled {func.__name__} with scale={kwargs['scale']}"
    >>> double(flambeau.ones(2)), double(Tagged(), scale=3)
    (tensor([2., 2.]), 'Tagged handled double with scale=3')
    >>> import inspect
    >>> str(inspect.signature(double)), double.__doc__
    ('(a, scale=2)', 'a * scale')
    """

    def decorate(func):
        public = _make_dispatching(func, relevant, unless)
        if method is not None:  # found (and pickled) as flambeau.Tensor.<method>
            public.__name__, public.__qualname__ = method, f"Tensor.{method}"
            public.__module__ = "flambeau"
        if name is not None:
            public.__name__ = name
        return public

    return decorate


def _make_dispatching(func, relevant, unless=None):
    params = list(inspect.signature(func).parameters.values())
    names = {p.name: p for p in params}
    missing = [r for r in relevant if r.lstrip("*") not in names]
    if missing:
        raise TypeError(f"{func.__qualname__} has no parameter(s) {missing}")
    has_var = any(p.kind is p.VAR_POSITIONAL for p in params)
    ns = {
        # The wrapper's frames belong to the function's module (code that walks the stack
        # for the first frame outside flambeau, as backward hooks' warnings do).
        "__name__": func.__module__,
        "_impl": func,
        "_T": Tensor,
        "_active": _active,
        "has_torch_function": has_torch_function,
        "handle_torch_function": handle_torch_function,
    }
    defs, call, hargs, hkw = [], [], [], []
    hargs_kw = None  # the function's own **kwargs, handed over as they came
    star = False
    for i, p in enumerate(params):
        default = ""
        if p.default is not p.empty:
            ns[f"_d{i}"] = p.default
            default = f"=_d{i}"
        n = p.name
        if p.kind is p.POSITIONAL_ONLY:
            defs.append(n + default)
            if i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY:
                defs.append("/")
            call.append(n)
            hargs.append(n)
        elif p.kind is p.POSITIONAL_OR_KEYWORD:
            defs.append(n + default)
            call.append(n)
            (hargs.append(n) if has_var or not default else hkw.append(n))
        elif p.kind is p.VAR_POSITIONAL:
            star = True
            defs.append(f"*{n}")
            call.append(f"*{n}")
            hargs.append(f"*{n}")
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                star = True
                defs.append("*")
            defs.append(n + default)
            call.append(f"{n}={n}")
            hkw.append(n)
        else:
            defs.append(f"**{n}")
            call.append(f"**{n}")
            hargs_kw = f"**{n}"
    rel = [
        f"*{r.lstrip('*')}" if r[0] == "*" or names[r].kind is names[r].VAR_POSITIONAL else r
        for r in relevant
    ]
    rel_tuple = f"({', '.join(rel)},)"
    # Plain tensors (and None) with no mode or skip anywhere: no check needed.
    quick = " or ".join(
        f"any(type(_a) is not _T for _a in {r[1:]})"
        if r.startswith("*")
        else f"({r} is not None and type({r}) is not _T)"
        for r in rel
    )
    cond = f"(_active[0] or {quick}) and has_torch_function({rel_tuple})"
    if unless:
        cond = f"not ({unless}) and {cond}"
    # out= is handed over only when given, as PyTorch's built-in functions do (a handler
    # mapping torch.inverse to a method of its own need not take out=None); the other
    # keywords go as PyTorch's Python functions (nn.functional's) hand theirs, all of them.
    kw_lines = "".join(
        f"        if {n} is not None: _kw[{n!r}] = {n}\n"
        if n == "out" and names[n].default is None
        else f"        _kw[{n!r}] = {n}\n"
        for n in hkw
    )
    handed = ", ".join(hargs + ["**_kw"] + ([hargs_kw] if hargs_kw else []))
    src = (
        f"def {func.__name__}({', '.join(defs)}):\n"
        f"    if {cond}:\n"
        f"        _kw = {{}}\n"
        f"{kw_lines}"
        f"        return handle_torch_function(_public, {rel_tuple}, {handed})\n"
        f"    return _impl({', '.join(call)})\n"
    )
    exec(compile(src, f"<flambeau dispatch of {func.__qualname__}>", "exec"), ns)
    public = ns["_public"] = ns[func.__name__]
    functools.update_wrapper(public, func)
    return public


# ---- redispatch_function: skipping one level of the protocol -------------------------


class _Skip(threading.local):
    pending = False  # the next check on this thread is skipped


_skip = _Skip()


def _take_skip() -> bool:
    """Whether this check is the one redispatch_function skips (it is then used up)."""
    if _skip.pending:
        _skip.pending = False
        _C._torch_function_mode_depth(-1)
        _count_active(-1)
        return True
    return False


def redispatch_function(func, types, args, kwargs):
    """Calls ``func(*args, **kwargs)`` with the next ``__torch_function__`` check skipped
    (``types`` is not used): what an override calls to run the function underneath while
    still seeing the operations it makes. The check skipped is the function's own
    (``has_torch_function``, or the operator's); RuntimeError if ``func`` made none.

    An operator runs as on plain tensors (its result is not re-classed); a Python
    function's own operations go through the protocol as usual. A mode that wants to
    see them re-enters itself (``with self:``) around the call.

    >>> from flambeau.overrides import handle_torch_function, has_torch_function
    >>> class Logged(flambeau.Tensor):
    ...     __slots__ = ()
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         print("calling", func.__name__)
    ...         return flambeau.overrides.redispatch_function(func, types, args, kwargs)
    >>> def scaled_mul(a, b):
    ...     if has_torch_function((a, b)):
    ...         return handle_torch_function(scaled_mul, (a, b), a, b)
    ...     return a * b + 1
    >>> x = flambeau.tensor([3.0]).as_subclass(Logged)
    >>> y = flambeau.tensor([4.0]).as_subclass(Logged)
    >>> scaled_mul(x, y)  # a * b is a plain tensor, so + 1 is not seen
    calling scaled_mul
    calling mul
    tensor([13.])
    """
    kwargs = kwargs or {}
    if _C._torch_function_all_disable(0) > 0:
        return func(*args, **kwargs)  # within DisableTorchFunction nothing is checked
    if _skip.pending:
        raise RuntimeError(
            "you cannot skip two levels of __torch_function__, you need to run one level of "
            "__torch_function__ before being able to skip again."
        )
    _skip.pending = True
    _C._torch_function_mode_depth(1)  # so that the core hands the next call here as well
    _count_active(1)
    try:
        result = func(*args, **kwargs)
    except BaseException:
        _take_skip()
        raise
    if _take_skip():
        raise RuntimeError(
            f"redispatch_function called on a function that doesn't use has_torch_function: "
            f"{getattr(func, '__qualname__', func)!r} made no __torch_function__ check"
        )
    return result


def _flatten(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


# The Tensor method PyTorch hands to __torch_function__ for a Python operator (x + y
# gives Tensor.add); operators not listed are handed over as themselves (__rsub__). A
# reflected operator maps to its method only where the method commutes (1 + x: x.add(1)).
_OPERATOR_METHODS = {
    **dict.fromkeys(("__add__", "__radd__"), "add"),
    **dict.fromkeys(("__mul__", "__rmul__"), "mul"),
    "__sub__": "sub",
    "__truediv__": "div",
    "__rtruediv__": "__rdiv__",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__rand__": "bitwise_and",
    "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor",
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
    **{f"__{c}__": c for c in ("eq", "ne", "lt", "le", "gt", "ge", "neg", "abs")},
    "__pos__": "positive",
}
# Python's binary operators: where the operands do not fit they answer NotImplemented.
_BINARY_OPERATORS = frozenset(
    f"__{p}{op}__"
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
               "or", "xor", "lshift", "rshift")
    for p in ("", "r", "i")
) | {f"__{c}__" for c in ("eq", "ne", "lt", "le", "gt", "ge")}  # fmt: skip


def _dispatch(name, is_method, args, kwargs):
    """The core's bindings call this when an argument overrides __torch_function__ (name:
    "add", "__add__", or "shape.__get__" for a property's getter)."""
    if is_method:
        attribute, _, accessor = _OPERATOR_METHODS.get(name, name).partition(".")
        func = getattr(Tensor, attribute)
        if accessor:
            func = getattr(func, accessor)
    else:
        func = getattr(_C, name)
    if _take_skip():  # redispatch_function: run it, this once without the protocol
        unwrapped = _wrapped_by(func)
        if unwrapped is not None:  # a wrapped attribute: what it wraps, whose own calls dispatch
            return unwrapped(*args, **kwargs)
        with DisableTorchFunction():
            return func(*args, **kwargs)
    relevant = list(_flatten(args, kwargs))
    if name in _BINARY_OPERATORS:
        # A Python operator answers NotImplemented where its operands do not fit (x == None,
        # x + "a"): Python then tries the reflected operator, as PyTorch's do.
        try:
            return handle_torch_function(func, relevant, *args, **kwargs)
        except TypeError:
            return NotImplemented
    if name.startswith("__"):
        try:
            return handle_torch_function(func, relevant, *args, **kwargs)
        except TypeError as e:
            if "no implementation found" in str(e):
                return NotImplemented
            raise
    return handle_torch_function(func, relevant, *args, **kwargs)


def _wrapped_by(func):
    """What the wrapper behind func wraps (Tensor.size: the bound function; the accessor
    Tensor.shape.__get__: the property's), or None when func is no wrapper's."""
    if isinstance(func, _C._DispatchingMethod):
        return func.__wrapped__
    owner = getattr(func, "__self__", None)
    if isinstance(owner, _C._DispatchingProperty):
        return getattr(owner.__wrapped__, func.__name__)
    return None


def _convert(ret, cls):
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)) and type(ret) in (tuple, list):
        return type(ret)(_convert(r, cls) for r in ret)
    return ret


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor's own ``__torch_function__``: run func with the protocol off, and return
    tensors as instances of cls."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
    if getattr(func, "__name__", None) == "__get__" and func in get_default_nowrap_functions():
        return ret  # a stored tensor (x.grad): wrapping it would break `x.grad is x.grad`
    return _convert(ret, cls)


def _register_subclass(cls, **kwargs):
    super(Tensor, cls).__init_subclass__(**kwargs)
    if _overriding(cls):
        _C._torch_function_register(cls)


def set_tensor_attribute(name: str, impl, handed_over_as: str | None = None) -> None:
    """Installs ``impl`` (a function taking self, or a property) as ``Tensor.<name>`` in a
    wrapper that hands calls to ``__torch_function__`` first, as Tensor.<handed_over_as>
    (default: name) or its property's ``__get__``/``__set__``. For methods and
    properties written in Python, or bound by hand, that PyTorch dispatches."""
    if isinstance(impl, (_C._DispatchingMethod, _C._DispatchingProperty)):
        impl = impl.__wrapped__
    wrapper = _C._DispatchingProperty if isinstance(impl, property) else _C._DispatchingMethod
    setattr(Tensor, name, wrapper(handed_over_as or name, impl))


def install_wrappers() -> None:
    """Hands the Tensor methods and properties without a check of their own to the
    protocol (the table's _WRAPPED_METHODS and _WRAPPED_PROPERTIES); run once every
    attribute of Tensor exists."""
    for name in _WRAPPED_METHODS.split():
        impl = getattr(Tensor, name, None)  # a pybind11 method as its function
        if impl is not None and not isinstance(impl, _C._DispatchingMethod):  # once
            set_tensor_attribute(name, impl, _WRAPPED_ALIASES.get(name))
    for name in _WRAPPED_PROPERTIES.split():
        impl = inspect.getattr_static(Tensor, name, None)
        if isinstance(impl, property):  # not yet wrapped
            set_tensor_attribute(name, impl)


def install() -> None:
    Tensor.__torch_function__ = classmethod(_default_torch_function)
    Tensor.__init_subclass__ = classmethod(_register_subclass)
    _C._disabled_torch_function_impl = _disabled_torch_function_impl
    _C.DisableTorchFunctionSubclass = DisableTorchFunctionSubclass
    _C.DisableTorchFunction = DisableTorchFunction
    _C._set_torch_function_handler(_dispatch)
