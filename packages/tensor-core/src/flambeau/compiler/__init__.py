"""``torch.compiler`` for a framework that runs eagerly.

PyTorch's ``torch.compiler`` drives ``torch.compile``. flambeau has no compiler:
``flambeau.compile`` returns the model it is given (see ``flambeau._compile``), and this
module answers as PyTorch's does when nothing is being compiled: ``is_compiling()``,
``is_dynamo_compiling()`` and ``is_exporting()`` are False, the decorators
(``disable``, ``allow_in_graph``, ``assume_constant_result``,
``substitute_in_graph``...) return the function they are given, ``set_stance`` is
recorded and changes nothing, and the cache functions have nothing to save or load.

>>> import flambeau
>>> flambeau.compiler.is_compiling()
False
>>> @flambeau.compiler.disable
... def log_stats(x):
...     return float(x.mean())
>>> log_stats(flambeau.ones(3))
1.0
"""

from __future__ import annotations

import dataclasses
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from flambeau import _dynamo
from flambeau.compiler import config  # noqa: F401

__all__ = [
    "compile",
    "config",
    "assume_constant_result",
    "reset",
    "allow_in_graph",
    "substitute_in_graph",
    "list_backends",
    "disable",
    "set_default_backend",
    "get_default_backend",
    "set_stance",
    "set_enable_guard_collectives",
    "cudagraph_mark_step_begin",
    "wrap_numpy",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "save_cache_artifacts",
    "load_cache_artifacts",
    "keep_portable_guards_unsafe",
    "skip_guard_on_inbuilt_nn_modules_unsafe",
    "skip_guard_on_all_nn_modules_unsafe",
    "keep_tensor_guards_unsafe",
    "skip_guard_on_globals_unsafe",
    "skip_all_guards_unsafe",
    "nested_compile_region",
    "load_compiled_function",
]


FuncType = Callable[..., Any]
F = TypeVar("F", bound=FuncType)


def compile(*args, **kwargs):  # noqa: A001 - PyTorch's name
    """:func:`flambeau.compile`: returns the model (or, without one, a decorator).

    >>> import flambeau
    >>> def f(x):
    ...     return x + 1
    >>> flambeau.compiler.compile(f) is f
    True
    """
    import flambeau

    return flambeau.compile(*args, **kwargs)


def reset() -> None:
    """Clears the compiler's in-process caches: flambeau has none.

    >>> import flambeau
    >>> flambeau.compiler.reset()
    """
    _dynamo.reset()


def allow_in_graph(fn):
    """Asks the compiler to put ``fn`` into its graph without tracing into it; returns
    ``fn`` (a list for a list or tuple of functions).

    >>> import flambeau
    >>> def my_op(x):
    ...     return x * 2
    >>> flambeau.compiler.allow_in_graph(my_op) is my_op
    True
    """
    return _dynamo.allow_in_graph(fn)


def substitute_in_graph(
    original_fn, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False
):
    """Registers a Python stand-in for ``original_fn`` (usually a C function) for the
    compiler to trace; called, the decorated function runs ``original_fn``, as in
    PyTorch's eager mode. The signatures must agree (TypeError otherwise).

    >>> import operator
    >>> import flambeau
    >>> @flambeau.compiler.substitute_in_graph(operator.indexOf)
    ... def indexOf(a, b, /):
    ...     for i, item in enumerate(a):
    ...         if item is b or item == b:
    ...             return i
    ...     raise ValueError("sequence.index(x): x not in sequence")
    >>> indexOf([1, 2, 3, 4, 5], 3)
    2
    """
    return _dynamo.substitute_in_graph(
        original_fn,
        can_constant_fold_through=can_constant_fold_through,
        skip_signature_check=skip_signature_check,
    )


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names ``flambeau.compile(backend=...)`` accepts, without those tagged
    with one of ``exclude_tags``; whichever is named, the model runs eagerly.

    >>> import flambeau
    >>> flambeau.compiler.list_backends()
    ['cudagraphs', 'inductor', 'openxla', 'tvm']
    """
    return _dynamo.list_backends(exclude_tags)


def assume_constant_result(fn):
    """Tells the compiler ``fn`` returns a constant; returns ``fn``.

    >>> import flambeau
    >>> def rank():
    ...     return 0
    >>> flambeau.compiler.assume_constant_result(rank) is rank
    True
    """
    return _dynamo.assume_constant_result(fn)


def disable(fn=None, recursive=True, *, reason=None):
    """Keeps the compiler out of ``fn``; returns ``fn`` (flambeau never compiles). Used
    bare, with arguments, or without ``fn`` as a decorator.

    >>> import flambeau
    >>> @flambeau.compiler.disable(recursive=False)
    ... def debug_print(x):
    ...     return x
    >>> debug_print(3)
    3
    """
    return _dynamo.disable(fn, recursive, reason=reason)


_default_backend: Any = "inductor"


def set_default_backend(backend) -> None:
    """Sets the backend ``flambeau.compile`` uses when given none (None resets it to
    ``"inductor"``); it runs eagerly whichever is set.

    >>> import flambeau
    >>> flambeau.compiler.set_default_backend("eager")
    >>> flambeau.compiler.get_default_backend()
    'eager'
    >>> flambeau.compiler.set_default_backend(None)
    >>> flambeau.compiler.get_default_backend()
    'inductor'
    """
    global _default_backend
    if backend is None:
        _default_backend = "inductor"
        return
    if not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"backend must be a string or callable, got {type(backend)}")
    _default_backend = backend


def get_default_backend():
    """The backend ``set_default_backend`` set (``"inductor"`` at first).

    >>> import flambeau
    >>> flambeau.compiler.get_default_backend()
    'inductor'
    """
    return _default_backend


def set_stance(
    stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend=None
):
    """Sets the compiler's stance (``"default"``, ``"force_eager"``,
    ``"eager_on_recompile"``, ``"fail_on_recompile"``, ``"eager_then_compile"``,
    ``"aot_eager_then_compile"``): as a call, a context manager or a decorator. flambeau
    runs eagerly under every stance.

    >>> import flambeau
    >>> with flambeau.compiler.set_stance("force_eager"):
    ...     pass
    """
    return _dynamo.set_stance(
        stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe, force_backend=force_backend
    )


set_stance._dynamo_forbidden = True

_guard_collectives = False


def set_enable_guard_collectives(enabled: bool) -> bool:
    """Turns collectives during guard evaluation on or off (flambeau has no guards);
    returns the previous setting.

    >>> import flambeau
    >>> flambeau.compiler.set_enable_guard_collectives(True)
    False
    >>> flambeau.compiler.set_enable_guard_collectives(False)
    True
    """
    global _guard_collectives
    prior, _guard_collectives = _guard_collectives, bool(enabled)
    return prior


set_enable_guard_collectives._dynamo_forbidden = True


def cudagraph_mark_step_begin() -> None:
    """Marks the start of an iteration for CUDA-graph trees; flambeau records no CUDA
    graphs, so nothing happens.

    >>> import flambeau
    >>> flambeau.compiler.cudagraph_mark_step_begin()
    """


def wrap_numpy(fn):
    """``fn``, a function of NumPy arrays, as a function of tensors: tensors go in as
    arrays and arrays come back as tensors (NumPy runs it, on the CPU).

    >>> import flambeau
    >>> @flambeau.compiler.wrap_numpy
    ... def norm2(a):
    ...     return (a * a).sum(keepdims=True)
    >>> norm2(flambeau.tensor([3.0, 4.0]))
    tensor([25.])
    """
    return _dynamo.external_utils.wrap_numpy(fn)


def is_compiling() -> bool:
    """Whether a graph is being traced by ``torch.compile`` or ``torch.export``: never.

    >>> import flambeau
    >>> flambeau.compiler.is_compiling()
    False
    """
    return False


def is_dynamo_compiling() -> bool:
    """Whether TorchDynamo is tracing: never.

    >>> import flambeau
    >>> flambeau.compiler.is_dynamo_compiling()
    False
    """
    return False


def is_exporting() -> bool:
    """Whether ``torch.export`` is tracing: never.

    >>> import flambeau
    >>> flambeau.compiler.is_exporting()
    False
    """
    return False


@dataclasses.dataclass
class CacheInfo:
    """What ``save_cache_artifacts`` and ``load_cache_artifacts`` report when they have
    artifacts: their keys by kind. flambeau compiles nothing, so it never makes one.

    >>> from flambeau.compiler import CacheInfo
    >>> CacheInfo().inductor_artifacts
    []
    """

    artifacts: defaultdict = dataclasses.field(default_factory=lambda: defaultdict(list))

    @property
    def inductor_artifacts(self) -> list:
        return self.artifacts["inductor"]

    @property
    def autotune_artifacts(self) -> list:
        return self.artifacts["autotune"]

    @property
    def aot_autograd_artifacts(self) -> list:
        return self.artifacts["aot_autograd"]

    @property
    def pgo_artifacts(self) -> list:
        return self.artifacts["pgo"]

    @property
    def precompile_artifacts(self) -> list:
        return self.artifacts["precompile"]


def save_cache_artifacts():
    """The compiler's cache artifacts, serialized: None, as there is nothing compiled
    (PyTorch answers None when it has nothing to save).

    >>> import flambeau
    >>> flambeau.compiler.save_cache_artifacts() is None
    True
    """
    return None


def load_cache_artifacts(serialized_artifacts: bytes):
    """Loads what ``save_cache_artifacts`` saved: there is no cache to fill, so None.

    >>> import flambeau
    >>> flambeau.compiler.load_cache_artifacts(b"") is None
    True
    """
    return None


# Guard filters: given the guard entries of a compiled function, say which to keep.
# flambeau has no guards, but the filters work on any entries with PyTorch's fields.


def keep_portable_guards_unsafe(guard_entries):
    """Keeps the guards on global state, shapes and non-global tensors.

    >>> import flambeau
    >>> flambeau.compiler.keep_portable_guards_unsafe([])
    []
    """
    return [
        g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
        or (g.guard_type == "TENSOR_MATCH" and not g.is_global)
        for g in guard_entries
    ]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    """Drops the guards on built-in modules' attributes.

    >>> import flambeau
    >>> flambeau.compiler.skip_guard_on_inbuilt_nn_modules_unsafe([])
    []
    """
    return [not e.orig_guard.source.is_unspecialized_builtin_nn_module() for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    """Drops the guards on every module's attributes.

    >>> import flambeau
    >>> flambeau.compiler.skip_guard_on_all_nn_modules_unsafe([])
    []
    """
    return [not e.orig_guard.source.is_unspecialized_nn_module() for e in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    """Keeps only the guards on tensors (on parameters too with ``keep_parameters``).

    >>> import flambeau
    >>> flambeau.compiler.keep_tensor_guards_unsafe([])
    []
    """

    def keep(entry) -> bool:
        if entry.guard_type != "TENSOR_MATCH":
            return False
        return keep_parameters or not _is_parameter(entry.value)

    return [keep(e) for e in guard_entries]


def _is_parameter(value) -> bool:
    nn = sys.modules.get("flambeau.nn")  # a Parameter exists only once flambeau.nn is loaded
    return nn is not None and isinstance(value, nn.Parameter)


def skip_guard_on_globals_unsafe(guard_entries):
    """Drops the guards on globals.

    >>> import flambeau
    >>> flambeau.compiler.skip_guard_on_globals_unsafe([])
    []
    """
    return [not e.is_global for e in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    """Drops every guard.

    >>> import flambeau
    >>> flambeau.compiler.skip_all_guards_unsafe([object()])
    [False]
    """
    return [False for _ in guard_entries]


def nested_compile_region(fn=None, *, options=None, max_reuse_entries: int = 8, reuse_hash_fn=None):
    """Marks ``fn`` as a region the compiler compiles once and reuses; outside
    ``torch.compile`` PyTorch runs it as it is, and so does flambeau: ``fn`` itself
    (without ``fn``, a decorator).

    >>> import flambeau
    >>> @flambeau.compiler.nested_compile_region
    ... def block(x):
    ...     return x + 1
    >>> block(flambeau.zeros(2))
    tensor([1., 1.])
    """
    if options is not None and not _dynamo.config.enable_invoke_subgraph_regional_compile:
        raise RuntimeError(
            "nested_compile_region config is an experimental feature for testing only."
        )
    if fn is None:
        return lambda f: f
    return fn


def load_compiled_function(file, *, f_globals=None, external_data=None):
    """Loads a function ``torch.compile`` compiled ahead of time and saved: such files
    hold compiled kernels, which flambeau cannot run, so this raises RuntimeError.

    >>> import io
    >>> import flambeau
    >>> flambeau.compiler.load_compiled_function(io.BytesIO(b""))
    Traceback (most recent call last):
    ...
    RuntimeError: flambeau has no compiler: ...
    """
    raise RuntimeError(
        "flambeau has no compiler: functions that torch.compile compiled ahead of time "
        "cannot be loaded; compile the original function with flambeau.compile instead "
        "(it runs eagerly)"
    )
