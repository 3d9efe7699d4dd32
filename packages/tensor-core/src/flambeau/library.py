"""flambeau.library: custom operators, with torch.library's spelling.

    lib = flambeau.library.Library("mylib", "DEF")
    lib.define("myadd(Tensor x, Tensor y, float alpha=1.0) -> Tensor")
    lib.impl("myadd", my_cpu_kernel, "CPU")           # a Python function or a bound C++ one
    flambeau.library.register_autograd("mylib::myadd", backward, setup_context=setup)
    flambeau.ops.mylib.myadd(a, b)                    # dispatched, recorded, in ops_table()

or, from a typed Python function, ``@flambeau.library.custom_op("mylib::f",
mutates_args=())``. How calls dispatch and record is described in
``flambeau._custom_ops`` and docs/design/extensions.rst.
"""

from __future__ import annotations

import inspect
import weakref

from flambeau import _op_schema
from flambeau._custom_ops import (
    AUTOGRAD,
    COMPOSITE_EXPLICIT,
    COMPOSITE_IMPLICIT,
    OPERATORS,
    OperatorEntry,
    OpOverloadPacket,
    find,
)

__all__ = [
    "Library",
    "CustomOpDef",
    "custom_op",
    "define",
    "impl",
    "register_autograd",
    "register_fake",
    "register_kernel",
]

# Namespaces of the built-in operators: libraries may not define operators in them.
_RESERVED_NAMESPACES = frozenset({"aten", "prim", "prims", "flambeau"})
# Namespace -> the DEF library that owns it (one per namespace, as in PyTorch).
_DEF_OWNERS: dict[str, str] = {}
# Libraries made by the functional API (define, register_kernel, ... without lib=):
# their registrations last for the life of the process, as in PyTorch.
_keep_alive: list[Library] = []


def _undo_all(undo: list) -> None:
    while undo:
        undo.pop()()


class Library:
    """A set of registrations in one namespace; they are removed when the Library is
    destroyed (``_destroy()``, or garbage collection), as PyTorch's are.

    kind: "DEF" defines operators (one DEF library per namespace), "FRAGMENT" defines
    more operators in a namespace, "IMPL" only registers kernels. dispatch_key: the
    default key of ``impl``.

    >>> lib = flambeau.library.Library("ex_lib", "DEF")
    >>> lib.define("scale(Tensor x, float alpha) -> Tensor")
    'scale'
    >>> lib.impl("scale", lambda x, alpha: x * alpha, "CPU")
    >>> flambeau.ops.ex_lib.scale(flambeau.tensor([1.0, 2.0]), 3.0)
    tensor([3., 6.])
    >>> lib._destroy()  # removes the operator again
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if not ns.isidentifier():
            raise ValueError(f"Library namespace must be an identifier, got {ns!r}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(
                f"{ns} is a reserved namespace. Please try creating a library with another name."
            )
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._undo: list = []
        if kind == "DEF":
            if ns in _DEF_OWNERS:
                raise RuntimeError(
                    f"Only a single Library(..., 'DEF') can be used to register the namespace "
                    f"{ns}; "
                    f"it was already registered by {_DEF_OWNERS[ns]}. Put all definitions in one "
                    f"library, or use Library('{ns}', 'FRAGMENT') for more of them."
                )
            _DEF_OWNERS[ns] = _caller()
            self._undo.append(lambda: _DEF_OWNERS.pop(ns, None))
        self._finalizer = weakref.finalize(self, _undo_all, self._undo)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Defines an operator: ``lib.define("foo(Tensor x, *, int n=1) -> Tensor")``.

        Returns its name (with overload). The operator is then ``flambeau.ops.<ns>.foo``.
        """
        if self.kind == "IMPL":
            raise RuntimeError(
                "Cannot define an operator inside of a Library(..., 'IMPL'); "
                "use 'DEF' or 'FRAGMENT'"
            )
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = _op_schema.parse(schema, self.ns)
        overloads = OPERATORS.setdefault(parsed.qualname, {})
        if parsed.overload in overloads:
            raise RuntimeError(
                f"Tried to register an operator ({parsed.qualname}"
                f"{'.' + parsed.overload if parsed.overload else ''}) with the same name and "
                f"overload name multiple times."
            )
        entry = OperatorEntry(parsed)
        overloads[parsed.overload] = entry

        def remove():
            if OPERATORS.get(parsed.qualname, {}).get(parsed.overload) is entry:
                del OPERATORS[parsed.qualname][parsed.overload]
                if not OPERATORS[parsed.qualname]:
                    del OPERATORS[parsed.qualname]

        self._undo.append(remove)
        return parsed.name + (f".{parsed.overload}" if parsed.overload else "")

    def impl(
        self,
        op_name,
        fn,
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = False,
    ):
        """Registers ``fn`` as the kernel of an operator for a dispatch key: a device
        type ("cpu", "cuda", a plugin's), its PyTorch key ("CPU", "CUDA"),
        "CompositeExplicitAutograd" (every device, opaque to autograd),
        "CompositeImplicitAutograd" or "" (every device, differentiated through the
        operators it calls) or "Autograd" (a kernel that records autograd itself).
        ``fn`` may be a C++ function bound with pybind11 (flambeau/extension.h)."""
        if with_keyset:
            raise NotImplementedError(
                "flambeau.library: with_keyset=True is not supported "
                "(there are no dispatch key sets)"
            )
        if not callable(fn):
            raise TypeError(f"impl: expected a callable kernel, got {type(fn).__name__}")
        qualname = _qualname(op_name, self.ns)
        entry = _entry(qualname, "impl")
        slot = _slot(dispatch_key or self.dispatch_key)
        if slot in entry.kernels and not allow_override:
            raise RuntimeError(
                f"This is not allowed since there's already a kernel registered from python "
                f"overriding {entry.name}'s behavior for {slot} dispatch key and "
                f"{entry.schema.namespace} "
                f"namespace."
            )
        previous = entry.kernels.get(slot)
        entry.kernels[slot] = fn

        def remove():
            if entry.kernels.get(slot) is fn:
                if previous is None:
                    del entry.kernels[slot]
                else:
                    entry.kernels[slot] = previous

        self._undo.append(remove)

    def _register_autograd(self, op, backward, setup_context) -> None:
        entry = _entry(_qualname(op, self.ns), "register_autograd")
        if not callable(backward):
            raise TypeError("register_autograd: backward must be callable")
        if setup_context is not None and not callable(setup_context):
            raise TypeError("register_autograd: setup_context must be callable or None")
        if any(a.mutable for a in entry.schema.arguments):
            raise NotImplementedError(
                f"register_autograd: {entry.name} mutates its inputs; a derivative can only be "
                f"registered for an operator that does not"
            )
        old = (entry.backward, entry.setup_context)
        entry.backward, entry.setup_context = backward, _adapt_setup_context(setup_context, entry)

        def remove():
            if entry.backward is backward:
                entry.backward, entry.setup_context = old

        self._undo.append(remove)

    def _register_fake(self, op, fn) -> None:
        entry = _entry(_qualname(op, self.ns), "register_fake")
        old = entry.fake
        entry.fake = fn

        def remove():
            if entry.fake is fn:
                entry.fake = old

        self._undo.append(remove)

    def _destroy(self) -> None:
        """Removes every registration made through this library."""
        self._finalizer()


def _caller() -> str:
    for frame in inspect.stack()[2:]:
        if not frame.filename.endswith("library.py"):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


def _adapt_setup_context(setup_context, entry: OperatorEntry):
    """setup_context(ctx, inputs, output), or with keyword_only_inputs= when it takes it."""
    if setup_context is None:
        return None
    try:
        takes_kwonly = "keyword_only_inputs" in inspect.signature(setup_context).parameters
    except (TypeError, ValueError):
        takes_kwonly = False
    if not takes_kwonly:
        return setup_context

    def with_kwonly(ctx, inputs, output, keyword_only_inputs=None):
        return setup_context(
            ctx=ctx, inputs=inputs, keyword_only_inputs=keyword_only_inputs, output=output
        )

    with_kwonly.wants_kwonly = True
    return with_kwonly


# PyTorch's dispatch keys for devices, as flambeau's device types.
_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "XPU": "xpu", "MPS": "mps", "Meta": "meta",
                "HIP": "hip", "MTIA": "mtia", "PrivateUse1": "privateuseone"}  # fmt: skip


def _slot(dispatch_key: str) -> str:
    if dispatch_key in ("", COMPOSITE_IMPLICIT):
        return COMPOSITE_IMPLICIT
    if dispatch_key in (COMPOSITE_EXPLICIT, "default"):
        return COMPOSITE_EXPLICIT
    if dispatch_key == AUTOGRAD or (
        dispatch_key.startswith(AUTOGRAD) and dispatch_key[len(AUTOGRAD) :] in _DEVICE_KEYS
    ):
        return AUTOGRAD
    if dispatch_key in _DEVICE_KEYS:
        return _DEVICE_KEYS[dispatch_key]
    if dispatch_key.isidentifier() and dispatch_key.islower():
        return dispatch_key  # a device type: "cpu", "cuda", a plugin's
    raise ValueError(
        f"flambeau.library does not support the dispatch key {dispatch_key!r}: use a device type "
        f"('cpu', 'cuda', ...), 'CompositeExplicitAutograd', 'CompositeImplicitAutograd' "
        f"or 'Autograd'"
    )


def _qualname(op, ns: str | None = None) -> str:
    if isinstance(op, CustomOpDef):
        return op._qualname
    if isinstance(op, OpOverloadPacket):
        return op._qualname
    if isinstance(op, OperatorEntry):
        return op.name
    if not isinstance(op, str):
        raise TypeError(
            f"expected an operator name like 'mylib::foo' or a custom op, got {type(op).__name__}"
        )
    if "::" not in op:
        if ns is None:
            raise ValueError(f"expected a qualified operator name 'namespace::name', got {op!r}")
        op = f"{ns}::{op}"
    if op.split("::")[0] in _RESERVED_NAMESPACES:
        raise NotImplementedError(
            f"flambeau.library cannot change the built-in operator {op}: its kernels are "
            f"compiled into the core's dispatcher"
        )
    return op


def _entry(qualname: str, what: str) -> OperatorEntry:
    entry = find(qualname)
    if entry is None:
        raise RuntimeError(
            f"{what}: the operator {qualname} is not defined; define it first "
            f"(Library.define or custom_op)"
        )
    return entry


def _library_for(op, lib) -> Library:
    if lib is not None:
        return lib
    lib = Library(_qualname(op).split("::")[0], "FRAGMENT")
    _keep_alive.append(lib)
    return lib


def _device_slots(device_types) -> list[str]:
    if device_types is None:
        return [COMPOSITE_EXPLICIT]
    if isinstance(device_types, str):
        device_types = [device_types]
    return [_slot(d) for d in device_types]


# --- the functional API ---------------------------------------------------------------


def define(qualname: str, schema: str, *, lib: Library | None = None, tags=()) -> None:
    """Defines an operator: ``define("mylib::foo", "(Tensor x) -> Tensor")``.

    >>> flambeau.library.define("ex_define::neg", "(Tensor x) -> Tensor")
    >>> @flambeau.library.impl("ex_define::neg", "cpu")
    ... def neg(x):
    ...     return -x
    >>> flambeau.ops.ex_define.neg(flambeau.tensor([1.0, -2.0]))
    tensor([-1.,  2.])
    """
    ns, _, name = _qualname(qualname).partition("::")
    _library_for(qualname, lib).define(name + schema, tags=tags)


def register_kernel(op, device_types, func=None, /, *, lib: Library | None = None):
    """Registers ``func`` for device types ("cpu", ["cpu", "cuda"]; None for every
    device). Used as a decorator when func is omitted.

    >>> flambeau.library.define("ex_register_kernel::half", "(Tensor x) -> Tensor")
    >>> @flambeau.library.register_kernel("ex_register_kernel::half", "cpu")
    ... def half(x):
    ...     return x / 2
    >>> flambeau.ops.ex_register_kernel.half(flambeau.tensor([4.0, 6.0]))
    tensor([2., 3.])
    """

    def register(fn):
        library = _library_for(op, lib)
        for slot in _device_slots(device_types):
            library.impl(_qualname(op), fn, slot, allow_override=True)
        return fn

    return register if func is None else register(func)


def impl(qualname, types, func=None, *, lib: Library | None = None):
    """``@impl("mylib::foo", "cpu")``: registers a kernel for device types (or dispatch keys).

    >>> flambeau.library.define("ex_impl::square", "(Tensor x) -> Tensor")
    >>> @flambeau.library.impl("ex_impl::square", "cpu")
    ... def square(x):
    ...     return x * x
    >>> flambeau.ops.ex_impl.square(flambeau.tensor([2.0, 3.0]))
    tensor([4., 9.])
    """
    return register_kernel(qualname, types, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib: Library | None = None) -> None:
    """Registers the derivative of an operator.

    ``setup_context(ctx, inputs, output)`` runs after the forward kernel with the
    positional inputs and saves what backward needs (``ctx.save_for_backward``);
    ``backward(ctx, *grads)`` returns one gradient per positional input (None for
    those without one). Calls then record into autograd when an input requires grad.

    >>> @flambeau.library.custom_op("ex_register_autograd::cube", mutates_args=())
    ... def cube(x: flambeau.Tensor) -> flambeau.Tensor:
    ...     return x**3
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.save_for_backward(inputs[0])
    >>> def backward(ctx, grad):
    ...     (x,) = ctx.saved_tensors
    ...     return 3 * x**2 * grad
    >>> flambeau.library.register_autograd(cube, backward, setup_context=setup_context)
    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> cube(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """
    _library_for(op, lib)._register_autograd(_qualname(op), backward, setup_context)


def register_fake(op, func=None, /, *, lib: Library | None = None):
    """Registers a fake (meta) implementation: it computes an output's sizes and dtype
    without touching data. flambeau has no fake tensors or tracing compiler, so it is
    stored (``flambeau.ops.<ns>.<op>.default.fake``) and not called; ported code that
    registers one keeps working. Used as a decorator when func is omitted.

    >>> @flambeau.library.custom_op("ex_register_fake::twice", mutates_args=())
    ... def twice(x: flambeau.Tensor) -> flambeau.Tensor:
    ...     return x * 2
    >>> @flambeau.library.register_fake("ex_register_fake::twice")
    ... def _(x):
    ...     return flambeau.empty_like(x)
    >>> twice(flambeau.tensor([1.0, 2.0]))  # the real kernel runs
    tensor([2., 4.])
    """

    def register(fn):
        _library_for(op, lib)._register_fake(_qualname(op), fn)
        return fn

    return register if func is None else register(func)


# --- custom_op ------------------------------------------------------------------------


class CustomOpDef:
    """The operator made by ``custom_op``: callable, with the registration methods.

    >>> @flambeau.library.custom_op("ex_custom_op_def::add_one", mutates_args=())
    ... def add_one(x: flambeau.Tensor) -> flambeau.Tensor:
    ...     return x + 1
    >>> add_one
    <CustomOpDef(ex_custom_op_def::add_one)>
    >>> add_one(flambeau.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """

    def __init__(self, namespace: str, name: str, schema: str, fn):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema)
        self.__doc__ = fn.__doc__
        self.__name__ = name

    @property
    def _opoverload(self) -> OperatorEntry:
        return _entry(self._qualname, "custom_op")

    def register_kernel(self, device_types, fn=None, /):
        def register(f):
            for slot in _device_slots(device_types):
                self._lib.impl(self._name, f, slot, allow_override=True)
            return f

        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        self._lib._register_autograd(self._name, backward, setup_context)

    def register_fake(self, fn, /):
        self._lib._register_fake(self._name, fn)
        return fn

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _destroy(self) -> None:
        self._lib._destroy()

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema: str | None = None):
    """Wraps a Python function into a custom operator ``flambeau.ops.<ns>.<name>``.

    The schema is inferred from the type annotations unless given; ``mutates_args``
    names the arguments the function changes in place ("unknown" when unsure), as in
    PyTorch. The function is the kernel for ``device_types`` (every device when None).

    >>> @flambeau.library.custom_op("ex_custom_op::twice", mutates_args=())
    ... def twice(x: flambeau.Tensor) -> flambeau.Tensor:
    ...     return x * 2
    >>> twice(flambeau.tensor([1.0, 2.0]))
    tensor([2., 4.])
    >>> flambeau.ops.ex_custom_op.twice(flambeau.tensor([3.0]))
    tensor([6.])
    """
    if "::" not in name:
        raise ValueError(f"custom_op: expected a name like 'mylib::{name}', got {name!r}")
    namespace, op_name = name.split("::", 1)
    _qualname(name)  # refuses the built-in namespaces

    def wrap(f):
        text = schema if schema is not None else _op_schema.infer_schema(f, mutates_args)
        op = CustomOpDef(namespace, op_name, text, f)
        op.register_kernel(device_types, f)
        return op

    return wrap if fn is None else wrap(fn)
