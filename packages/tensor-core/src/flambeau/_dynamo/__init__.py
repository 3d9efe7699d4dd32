"""``torch._dynamo``'s decorators, markers and settings, for a framework that runs eagerly.

Libraries import ``torch._dynamo`` to mark code for the compiler (``disable``,
``allow_in_graph``, ``mark_dynamic``...), to ask whether it is compiling, or to set
``torch._dynamo.config``. flambeau has no compiler (``flambeau.compile`` returns what it
is given), so these do what they do in PyTorch's eager execution: decorators return the
function they are given, markers record their mark as PyTorch does and change nothing
else, ``is_compiling()`` is False, and ``config`` holds PyTorch's settings and defaults.

>>> import flambeau
>>> @flambeau._dynamo.disable
... def step(x):
...     return x * 2
>>> step(flambeau.ones(2))
tensor([2., 2.])
>>> flambeau._dynamo.is_compiling()
False
"""

from __future__ import annotations

import functools
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flambeau._dynamo import config, eval_frame, external_utils  # noqa: F401
from flambeau._dynamo.eval_frame import OptimizedModule, _set_stance, innermost_fn
from flambeau._dynamo.external_utils import is_compiling

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "disallow_in_graph",
    "dont_skip_tracing",
    "forbid_in_graph",
    "graph_break",
    "is_compiling",
    "is_dynamo_supported",
    "is_inductor_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "nonstrict_trace",
    "optimize",
    "register_backend",
    "reset",
    "run",
    "set_stance",
    "substitute_in_graph",
]


class _Passthrough:
    """What a compiler decorator or context is without a compiler: applied to a
    function it returns the function; as a context manager it does nothing."""

    def __call__(self, fn):
        fn = innermost_fn(fn)
        if not callable(fn):
            raise AssertionError("fn must be callable")
        return fn

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


def _check_callable(fn, what: str):
    if not callable(fn):
        raise AssertionError(f"{what} expects a callable")


# --------------------------------------------------------------------------- decorators


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Keeps the compiler out of ``fn``: ``fn`` itself, as flambeau never compiles. Works
    bare (``@disable``), with arguments (``@disable(recursive=False)``) and, without
    ``fn``, as a decorator.

    >>> import flambeau
    >>> def f(x):
    ...     return x + 1
    >>> flambeau._dynamo.disable(f) is f, flambeau._dynamo.disable(recursive=False)(f) is f
    (True, True)
    """
    del recursive, reason, wrapping
    if fn is None:
        return _Passthrough()
    return _Passthrough()(fn)


def run(fn=None):
    """Runs ``fn`` with compiled code only (no new compilation): ``fn`` itself here.

    >>> import flambeau
    >>> flambeau._dynamo.run(len) is len
    True
    """
    if fn is None:
        return _Passthrough()
    return _Passthrough()(fn)


def optimize(*args, **kwargs):
    """``torch._dynamo.optimize(backend, ...)``: a decorator that compiles; here it
    returns the function (or module) unchanged.

    >>> import flambeau
    >>> def f(x):
    ...     return x * 3
    >>> flambeau._dynamo.optimize("eager")(f) is f
    True
    """
    del args, kwargs
    return _Passthrough()


def allow_in_graph(fn):
    """Asks the compiler to put ``fn`` into its graph as a call; returns ``fn`` (a list
    for a list or tuple of functions).

    >>> import flambeau
    >>> flambeau._dynamo.allow_in_graph(len) is len
    True
    """
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    _check_callable(fn, "allow_in_graph")
    return fn


def disallow_in_graph(fn):
    """Asks the compiler to break its graph at ``fn``; returns ``fn``.

    >>> import flambeau
    >>> flambeau._dynamo.disallow_in_graph(flambeau.sub) is flambeau.sub
    True
    """
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(f) for f in fn]
    _check_callable(fn, "disallow_in_graph")
    return fn


def forbid_in_graph(fn):
    """Marks ``fn`` as never to be traced (``fn._dynamo_forbidden = True``, as PyTorch);
    returns ``fn``.

    >>> import flambeau
    >>> def f():
    ...     pass
    >>> flambeau._dynamo.forbid_in_graph(f)._dynamo_forbidden
    True
    """
    if isinstance(fn, (list, tuple)):
        return [forbid_in_graph(f) for f in fn]
    if not callable(fn):
        raise AssertionError("forbid_in_graph applies only to callables")
    fn._dynamo_forbidden = True
    return fn


def assume_constant_result(fn):
    """Tells the compiler ``fn``'s result is a constant; marks ``fn`` as PyTorch does
    (``fn._dynamo_marked_constant = True``) and returns it.

    >>> import flambeau
    >>> def world_size():
    ...     return 1
    >>> flambeau._dynamo.assume_constant_result(world_size) is world_size
    True
    """
    fn._dynamo_marked_constant = True
    return fn


def nonstrict_trace(traceable_fn):
    """Lets the compiler call ``traceable_fn`` without tracing into it; returns it.

    >>> import flambeau
    >>> flambeau._dynamo.nonstrict_trace(len) is len
    True
    """
    if not callable(traceable_fn):
        raise AssertionError("nonstrict_trace expects a callable")
    return traceable_fn


def dont_skip_tracing(fn=None):
    """Makes the compiler trace into code it skips by default: ``fn`` itself here, and
    without ``fn`` a decorator and context manager that do nothing.

    >>> import flambeau
    >>> flambeau._dynamo.dont_skip_tracing(len) is len
    True
    """
    if fn is None:
        return _Passthrough()
    return _Passthrough()(fn)


def graph_break(msg: str = "") -> None:
    """Forces a break in the compiler's graph: nothing to do when running eagerly.

    >>> import flambeau
    >>> flambeau._dynamo.graph_break()
    """


_FUNCTION_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
)
_POLYFILLED: set[int] = set()


def substitute_in_graph(
    original_fn,
    *,
    can_constant_fold_through: bool = False,
    skip_signature_check: bool = False,
    is_embedded_type: bool = False,
):
    """Registers a Python stand-in the compiler traces in place of ``original_fn`` (a C
    function, usually). The decorated function, called, runs ``original_fn``, as in
    PyTorch's eager mode; a signature that differs from the original's is a TypeError.

    >>> import operator
    >>> import flambeau
    >>> @flambeau._dynamo.substitute_in_graph(operator.length_hint)
    ... def length_hint(obj, default=0, /):
    ...     return len(obj)
    >>> length_hint([1, 2, 3])
    3
    """
    if not isinstance(original_fn, _FUNCTION_TYPES) and not (
        is_embedded_type and isinstance(original_fn, type)
    ):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")

    def wrapper(traceable_fn):
        if not isinstance(traceable_fn, _FUNCTION_TYPES):
            raise TypeError(
                f"@substitute_in_graph(...) expects a function but got {type(traceable_fn)!r}"
            )
        if not skip_signature_check:
            _check_same_signature(original_fn, traceable_fn)
        if id(original_fn) in _POLYFILLED:
            raise ValueError(f"Duplicate polyfilled object {original_fn}")

        @functools.wraps(traceable_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)

        _POLYFILLED.add(id(original_fn))
        wrapped.__torch_dynamo_original__ = original_fn
        wrapped.__torch_dynamo_polyfill__ = traceable_fn
        wrapped.__torch_dynamo_can_constant_fold_through__ = can_constant_fold_through
        return wrapped

    return wrapper


def _check_same_signature(original_fn, traceable_fn) -> None:
    import inspect

    try:
        original = inspect.signature(original_fn)
    except ValueError:  # a C function without a signature
        return
    traceable = inspect.signature(traceable_fn)
    star = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

    def ident(sig):
        params = sig.parameters.values()
        return (
            tuple(p.name for p in params if p.kind not in (*star, p.KEYWORD_ONLY)),
            {p.name for p in params if p.kind == p.KEYWORD_ONLY},
            {p.name: p.default for p in params if p.kind not in star},
        )

    wildcard = ident(inspect.signature(lambda *args, **kwargs: None))
    if ident(original) != ident(traceable) and wildcard not in (ident(original), ident(traceable)):
        raise TypeError(
            f"Signature mismatch between {original_fn} and {traceable_fn}: "
            f"{original} != {traceable}"
        )


# --------------------------------------------------------------------------- markers


@dataclass(frozen=True)
class _DimRange:
    """A dimension marked dynamic, with the range ``mark_dynamic`` was given."""

    dim: int
    min: int | None
    max: int | None


def _index_error(index) -> AssertionError:
    return AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """Marks dimension(s) ``index`` of tensor ``t`` as dynamic for the compiler. The mark
    is recorded on the tensor as PyTorch records it (``t._dynamo_dynamic_indices``)
    and changes nothing when running eagerly.

    >>> import flambeau
    >>> x = flambeau.zeros(4, 3)
    >>> flambeau._dynamo.mark_dynamic(x, 0)
    >>> x._dynamo_dynamic_indices
    {0}
    """
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_dynamic_indices"):
            t._dynamo_dynamic_indices = set()
            t._dynamo_dynamic_range = set()
            t._dynamo_hint_overrides = {}
        if not hasattr(t, "_specialize_on"):
            t._specialize_on = {}
        if hint_override:
            t._dynamo_hint_overrides[index] = hint_override
        t._dynamo_dynamic_indices.add(index)
        t._dynamo_dynamic_range.add(_DimRange(index, min, max))
        t._has_dynamo_dim_marking = True
        if isinstance(t._specialize_on, dict):
            t._specialize_on[index] = specialize_on if specialize_on is not None else []
        return
    if not isinstance(index, (list, tuple)):
        raise _index_error(index)
    for i in index:
        mark_dynamic(t, i, min=min, max=max, specialize_on=specialize_on)


def maybe_mark_dynamic(t, index) -> None:
    """Marks dimension(s) of ``t`` as dynamic if the compiler can keep them so
    (``t._dynamo_weak_dynamic_indices``); nothing else when running eagerly.

    >>> import flambeau
    >>> x = flambeau.zeros(4, 3)
    >>> flambeau._dynamo.maybe_mark_dynamic(x, [0, 1])
    >>> sorted(x._dynamo_weak_dynamic_indices)
    [0, 1]
    """
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_weak_dynamic_indices"):
            t._dynamo_weak_dynamic_indices = set()
        t._dynamo_weak_dynamic_indices.add(index)
        t._has_dynamo_dim_marking = True
        return
    if not isinstance(index, (list, tuple)):
        raise _index_error(index)
    for i in index:
        maybe_mark_dynamic(t, i)


def mark_static(t, index=None):
    """Marks dimension(s) of tensor ``t`` as static (all of them when ``index`` is None),
    or a module class as static; recorded as PyTorch records it.

    >>> import flambeau
    >>> x = flambeau.zeros(4, 3)
    >>> flambeau._dynamo.mark_static(x)
    >>> sorted(x._dynamo_static_indices)
    [0, 1]
    """
    import flambeau

    if isinstance(t, type):  # an nn.Module class
        t._dynamo_marked_static = True
        return t
    if not isinstance(t, flambeau.Tensor):
        raise TypeError(f"mark_static expects a tensor/nn.Module class but received {type(t)}")
    if isinstance(index, int):
        if not hasattr(t, "_dynamo_static_indices"):
            t._dynamo_static_indices = set()
        t._dynamo_static_indices.add(index)
        t._has_dynamo_dim_marking = True
    elif index is None:
        for i in range(t.dim()):
            mark_static(t, i)
    else:
        if not isinstance(index, (list, tuple)):
            raise _index_error(index)
        for i in index:
            mark_static(t, i)


def mark_static_address(t, guard: bool = False) -> None:
    """Marks tensor ``t``'s memory as fixed across calls (for CUDA graphs); recorded as
    ``t._dynamo_static_input_type``.

    >>> import flambeau
    >>> cache = flambeau.zeros(8)
    >>> flambeau._dynamo.mark_static_address(cache)
    >>> cache._dynamo_static_input_type
    'unguarded'
    """
    import flambeau

    if not isinstance(t, flambeau.Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


# --------------------------------------------------------------------------- stance, state


class set_stance:  # noqa: N801 - PyTorch's name
    """Sets the compiler's stance: called, for good; as a context manager, for the
    block; as a decorator, while the function runs. ``force_backend`` goes with the
    ``"default"`` stance only (RuntimeError otherwise). As in PyTorch, the stance's name
    is not checked here (PyTorch finds an unknown one when a compiled function next
    runs). flambeau always runs eagerly, so no stance changes what a program computes.

    >>> import flambeau
    >>> with flambeau._dynamo.set_stance("force_eager"):
    ...     flambeau._dynamo.eval_frame._stance.stance
    'force_eager'
    >>> flambeau._dynamo.eval_frame._stance.stance
    'default'
    """

    _dynamo_forbidden = True

    def __init__(
        self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend=None
    ) -> None:
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = eval_frame.DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)  # as a decorator, the stance applies while fn runs only

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        wrapper._dynamo_forbidden = True
        return wrapper

    def __enter__(self) -> None:
        _set_stance(self.stance)

    def __exit__(self, *exc) -> None:
        _set_stance(self.prev)

    def clone(self) -> set_stance:
        return type(self)(self.stance.stance, force_backend=self.stance.backend)


def reset() -> None:
    """Clears the compiler's caches: flambeau has none, so nothing happens.

    >>> import flambeau
    >>> flambeau._dynamo.reset()
    """


def is_dynamo_supported() -> bool:
    """Whether this Python can run TorchDynamo: False, flambeau has no compiler.

    >>> import flambeau
    >>> flambeau._dynamo.is_dynamo_supported()
    False
    """
    return False


def is_inductor_supported() -> bool:
    """Whether TorchInductor can compile here: False, flambeau has no compiler.

    >>> import flambeau
    >>> flambeau._dynamo.is_inductor_supported()
    False
    """
    return False


# --------------------------------------------------------------------------- backends

# PyTorch 2.13's built-in backends and their tags. flambeau.compile accepts any of them
# (and any other), and runs the model eagerly whichever is named.
_BUILTIN_BACKENDS: dict[str, tuple[str, ...]] = {
    "cudagraphs": (),
    "inductor": (),
    "openxla": (),
    "tvm": (),
    "openxla_eval": ("experimental",),
    **dict.fromkeys(
        (
            "aot_eager",
            "aot_eager_decomp_partition",
            "aot_eager_decomp_partition_crossref",
            "aot_eager_decomp_partition_with_mode",
            "aot_eager_default_partitioner",
            "aot_ts",
            "dynamo_accuracy_minifier_backend",
            "dynamo_minifier_backend",
            "eager",
            "eager_debug",
            "eager_noexcept",
            "invoke_subgraph",
            "non_leaf_compile_error_TESTING_ONLY",
            "pre_dispatch_eager",
            "relu_accuracy_error_TESTING_ONLY",
            "relu_compile_error_TESTING_ONLY",
            "relu_runtime_error_TESTING_ONLY",
            "ts",
        ),
        ("debug",),
    ),
}
_BACKENDS: dict[str, tuple[str, ...]] = dict(_BUILTIN_BACKENDS)
_COMPILER_FNS: dict[str, Any] = {}


def register_backend(compiler_fn=None, name: str | None = None, tags: Sequence[str] = ()):
    """Registers a compiler backend under ``name`` (by default the function's name), so
    ``list_backends`` names it. flambeau never calls it: compiled models run eagerly.

    >>> import flambeau
    >>> @flambeau._dynamo.register_backend(tags=("experimental",))
    ... def my_backend(graph_module, example_inputs):
    ...     return graph_module.forward
    >>> "my_backend" in flambeau._dynamo.list_backends(exclude_tags=())
    True
    """
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"compiler_fn must be callable, got {type(compiler_fn)}")
    name = name or compiler_fn.__name__
    if name in _COMPILER_FNS:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = tuple(tags)
    _COMPILER_FNS[name] = compiler_fn
    compiler_fn._tags = tuple(tags)
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names ``flambeau.compile(backend=...)`` accepts (PyTorch's, and those
    ``register_backend`` added), without those tagged with one of ``exclude_tags``.
    Whichever is named, flambeau runs the model eagerly.

    >>> import flambeau
    >>> "inductor" in flambeau._dynamo.list_backends()
    True
    """
    excluded = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not excluded.intersection(tags))
