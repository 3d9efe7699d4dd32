"""The registry and dispatcher of custom operators (flambeau.library), and flambeau.ops.

The core's dispatcher is C++ and its table is fixed at build time, so operators
defined at run time live here, in Python: each has a schema, kernels by dispatch slot
(a device type such as "cpu", or one of the composite slots below), an optional
derivative and an optional fake implementation. Calling one binds the arguments to
the schema, picks the kernel for the inputs' device type and, when grad mode is on
and an input requires grad, records the call into autograd (flambeau.autograd is
imported only then). See docs/design/extensions.rst.
"""

from __future__ import annotations

import flambeau
from flambeau import _op_schema

# Slots that are not device types: a kernel for every device that differentiates
# through the operators it calls (torch's CompositeImplicitAutograd), a kernel for every
# device that is treated as opaque by autograd (CompositeExplicitAutograd), and a kernel
# that does its own autograd ("Autograd").
COMPOSITE_IMPLICIT = "CompositeImplicitAutograd"
COMPOSITE_EXPLICIT = "CompositeExplicitAutograd"
AUTOGRAD = "Autograd"


class OperatorEntry:
    """One operator (one overload): its schema and what is registered for it."""

    def __init__(self, schema: _op_schema.FunctionSchema):
        self.schema = schema
        self.kernels: dict[str, object] = {}  # slot -> callable
        self.backward = None
        self.setup_context = None
        self.fake = None
        self._function_class = None  # the autograd.Function recording calls, made on first use

    @property
    def name(self) -> str:
        """ "mylib::foo" or "mylib::foo.overload"."""
        s = self.schema
        return s.qualname + (f".{s.overload}" if s.overload else "")

    def __call__(self, *args, **kwargs):
        positional, kwonly = self.schema.bind(args, kwargs)
        device_type = _device_type(positional, kwonly)
        if flambeau.is_grad_enabled() and _any_requires_grad(positional, kwonly):
            if AUTOGRAD in self.kernels:
                return self.kernels[AUTOGRAD](*positional, **kwonly)
            composite_only = not self._has_backend_kernel(device_type)
            if self.backward is None and composite_only and COMPOSITE_IMPLICIT in self.kernels:
                # differentiates through the operators it calls
                return self.kernels[COMPOSITE_IMPLICIT](*positional, **kwonly)
            function = self._autograd_function()
            if function is not None:
                return function.apply(kwonly, device_type, *positional)
        return self.kernel_for(device_type)(*positional, **kwonly)

    def _has_backend_kernel(self, device_type: str) -> bool:
        return device_type in self.kernels or COMPOSITE_EXPLICIT in self.kernels

    def kernel_for(self, device_type: str):
        for slot in (device_type, COMPOSITE_EXPLICIT, COMPOSITE_IMPLICIT):
            if slot in self.kernels:
                return self.kernels[slot]
        have = sorted(k for k in self.kernels if k != AUTOGRAD)
        raise NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{device_type}' backend: no "
            f"kernel is registered for it. '{self.name}' is only available for these "
            f"backends: [{', '.join(have)}]. Register one with "
            f"flambeau.library.register_kernel('{self.schema.qualname}', '{device_type}', fn)."
        )

    def _autograd_function(self):
        """The autograd.Function recording this operator; None without flambeau.autograd."""
        if self._function_class is None:
            try:
                from flambeau.autograd import Function
            except ImportError:
                return None  # without the autograd package nothing records, as for built-ins
            self._function_class = _make_function(self, Function)
        return self._function_class

    def ops_table_row(self) -> dict:
        s = self.schema
        return {
            "name": s.qualname,
            "schema": s.text,
            "category": "custom",
            "doc": "",
            "example": "",
            "variants": ["function"],
            "dunders": [],
            "overload": s.overload,
            "n_outputs": len(s.returns),
            "params": [
                {"name": a.name, "type": a.type, "default": a.default, "kwonly": a.kwonly}
                for a in s.arguments
            ],
            "nondeterministic": [],
            "nondeterministic_if": None,
            "view": False,
            "autocast": None,
            "devices": sorted(self.kernels),
            "has_autograd": self.backward is not None,
        }


def _make_function(entry: OperatorEntry, Function):
    """An autograd.Function whose forward runs the kernel and whose backward runs the
    registered derivative (or raises when none is registered)."""

    def forward(ctx, kwonly, device_type, *positional):
        ctx.needs_input_grad = ctx.needs_input_grad[2:]  # as the schema's arguments
        output = entry.kernel_for(device_type)(*positional, **kwonly)
        if entry.setup_context is not None:
            extra = (
                {"keyword_only_inputs": kwonly}
                if getattr(entry.setup_context, "wants_kwonly", False)
                else {}
            )
            entry.setup_context(ctx=ctx, inputs=tuple(positional), output=output, **extra)
        return output

    def backward(ctx, *grads):
        if entry.backward is None:
            raise RuntimeError(
                f"{entry.name}: no derivative is registered for this operator, but we are "
                f"trying to backprop through it. Register one with "
                f"flambeau.library.register_autograd('{entry.schema.qualname}', backward, "
                f"setup_context=...)."
            )
        result = entry.backward(ctx, *grads)
        n = len(entry.schema.positional)
        if not isinstance(result, (tuple, list)):
            result = (result,)
        if len(result) != n:
            raise RuntimeError(
                f"{entry.name}: the backward function returned {len(result)} gradient(s), "
                f"expected one per positional argument ({n}); use None for arguments without one"
            )
        return (None, None, *result)

    name = entry.schema.name + (f"_{entry.schema.overload}" if entry.schema.overload else "")
    return type(
        name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    )


def _tensors(positional, kwonly):
    for value in (*positional, *kwonly.values()):
        if isinstance(value, flambeau.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, flambeau.Tensor))


def _device_type(positional, kwonly) -> str:
    """The device type a call dispatches on: the first non-CPU tensor's, else "cpu"
    (as PyTorch's dispatch keys rank an accelerator above the CPU)."""
    for t in _tensors(positional, kwonly):
        if t.device.type != "cpu":
            return t.device.type
    return "cpu"


def _any_requires_grad(positional, kwonly) -> bool:
    return any(t.requires_grad for t in _tensors(positional, kwonly))


# --- the registry ---------------------------------------------------------------------

# "mylib::foo" -> {overload name ("" for the default) -> OperatorEntry}
OPERATORS: dict[str, dict[str, OperatorEntry]] = {}


def find(qualname: str) -> OperatorEntry | None:
    """The entry of "ns::name" or "ns::name.overload" (None when not defined)."""
    name, _, overload = qualname.partition(".")
    return OPERATORS.get(name, {}).get(overload)


def ops_table_rows() -> list[dict]:
    return [
        entry.ops_table_row() for overloads in OPERATORS.values() for entry in overloads.values()
    ]


# --- flambeau.ops ---------------------------------------------------------------------


class OpOverloadPacket:
    """flambeau.ops.<ns>.<name>: every overload of an operator; calling it picks the
    first overload whose schema the arguments fit (the default one first)."""

    def __init__(self, qualname: str):
        self._qualname = qualname

    def _overloads(self) -> dict[str, OperatorEntry]:
        overloads = OPERATORS.get(self._qualname)
        if not overloads:
            raise RuntimeError(
                f"The operator {self._qualname} has been removed (its Library was destroyed)"
            )
        return overloads

    def overloads(self) -> list[str]:
        return ["default" if o == "" else o for o in self._overloads()]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        entry = self._overloads().get("" if name == "default" else name)
        if entry is None:
            raise AttributeError(
                f"The underlying op of '{self._qualname}' has no overload name '{name}'"
            )
        return entry

    def __call__(self, *args, **kwargs):
        overloads = self._overloads()
        ordered = sorted(overloads.items(), key=lambda item: item[0] != "")
        if len(ordered) == 1:
            return ordered[0][1](*args, **kwargs)
        errors = []
        for _, entry in ordered:
            try:
                entry.schema.bind(args, kwargs)
            except TypeError as e:
                errors.append(f"  {entry.schema.text}: {e}")
                continue
            return entry(*args, **kwargs)
        raise TypeError(
            f"{self._qualname}(): no overload matches the arguments:\n" + "\n".join(errors)
        )

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._qualname.replace('::', '.')}')>"


class _OpNamespace:
    """flambeau.ops.<ns>: its operators as attributes. flambeau.ops.aten holds the
    built-in operators (flambeau.ops.aten.add is flambeau.add)."""

    def __init__(self, namespace: str):
        self._namespace = namespace

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        qualname = f"{self._namespace}::{name}"
        if qualname in OPERATORS:
            return OpOverloadPacket(qualname)
        if self._namespace == "aten" and not name.startswith("_") and hasattr(flambeau, name):
            return getattr(flambeau, name)
        raise AttributeError(f"'_OpNamespace' '{self._namespace}' object has no attribute '{name}'")

    def __dir__(self):
        prefix = f"{self._namespace}::"
        return sorted(q[len(prefix) :] for q in OPERATORS if q.startswith(prefix))

    def __repr__(self):
        return f"<flambeau.ops.{self._namespace}>"


class _Ops:
    """flambeau.ops: ``flambeau.ops.<namespace>.<operator>``."""

    __name__ = "flambeau.ops"

    def __getattr__(self, namespace):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return _OpNamespace(namespace)

    def load_library(self, path) -> None:
        """Loads a shared library whose static initialisers register operators (as
        torch.ops.load_library); it is kept loaded for the life of the process."""
        import ctypes
        import os

        ctypes.CDLL(os.fspath(path), mode=ctypes.RTLD_GLOBAL)
        self.loaded_libraries.add(os.fspath(path))

    loaded_libraries: set = set()

    def __dir__(self):
        return sorted({q.split("::")[0] for q in OPERATORS} | {"aten"})

    def __repr__(self):
        return "<module 'flambeau.ops'>"


ops = _Ops()
