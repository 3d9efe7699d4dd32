"""``script`` and ``trace`` as with PyTorch's JIT disabled: they return what they are given.

``script`` compiles nothing; ``trace`` runs the function (or module) once with its
example inputs, as tracing does, so that inputs that do not fit fail here rather than
later, and returns it. The compiled and the eager program compute the same values.
"""

from __future__ import annotations

import functools
import warnings

from flambeau.jit._deprecation import warn_deprecated


def _module_classes():
    """(nn.Module, jit.ScriptModule), or None without flambeau-nn (then nothing is a module)."""
    try:
        from flambeau.jit._modules import ScriptModule
        from flambeau.nn import Module
    except ImportError:
        return None
    return Module, ScriptModule


def is_scripting() -> bool:
    """True inside code the TorchScript compiler runs: never, in flambeau.

    >>> def forward(x):
    ...     if flambeau.jit.is_scripting():
    ...         return x
    ...     return x * 2  # the eager path, which flambeau always takes
    >>> forward(flambeau.ones(1))
    tensor([2.])
    """
    return False


def is_tracing() -> bool:
    """True while ``trace`` records a function: never, in flambeau (``trace`` runs it
    eagerly, and the program later takes the same path).

    >>> flambeau.jit.is_tracing()
    False
    """
    return False


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function, ``nn.Module``, class, dict or list) unchanged.

    >>> @flambeau.jit.script
    ... def scale(x, factor: float):
    ...     return x * factor
    >>> scale(flambeau.ones(2), 3.0)
    tensor([3., 3.])
    """
    del optimize, _frames_up, _rcb, example_inputs
    warn_deprecated("script")
    return obj


def script_method(fn):
    """Marks a method of a ``ScriptModule`` subclass for compilation; returns ``fn``.

    >>> class Scaled(flambeau.jit.ScriptModule):
    ...     @flambeau.jit.script_method
    ...     def forward(self, x):
    ...         return x * 2
    >>> Scaled()(flambeau.ones(1))
    tensor([2.])
    """
    warn_deprecated("script_method")
    return fn


def interface(obj):
    """Declares an interface class for annotations; returns the class.

    Checks what PyTorch checks: ``obj`` is a class deriving from ``object`` or directly
    from ``nn.Module``.

    >>> @flambeau.jit.interface
    ... class Runner:
    ...     def run(self, x: flambeau.Tensor) -> flambeau.Tensor:
    ...         pass
    >>> Runner.__name__
    'Runner'
    """
    warn_deprecated("interface")
    if not isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    classes = _module_classes()
    is_module_interface = (
        classes is not None and issubclass(obj, classes[0]) and len(obj.mro()) == 3
    )
    if not is_module_interface and len(obj.mro()) > 2:
        raise RuntimeError(
            "TorchScript interface does not support inheritance yet. "
            "Please directly inherit from 'object' or 'nn.Module'."
        )
    return obj


def _as_tuple(example_inputs) -> tuple:
    import flambeau

    if isinstance(example_inputs, (flambeau.Tensor, dict)):
        return (example_inputs,)
    if not isinstance(example_inputs, tuple):
        return tuple(example_inputs)
    return example_inputs


def _run_method(mod, method_name: str, example_inputs, inputs_are_kwargs: bool) -> None:
    """Calls ``mod.<method_name>`` once with the example inputs, as trace_module does
    (``forward`` through ``mod(...)``, so that hooks run as they would)."""
    method = getattr(mod, method_name)
    func = mod if method_name == "forward" else method
    if inputs_are_kwargs and isinstance(example_inputs, dict):
        import inspect  # not at the top: 10 ms of imports, for this check only

        names = list(inspect.signature(method).parameters)
        for key in example_inputs:
            if key not in names:
                raise NameError(
                    f"'{key}' is not in {method_name}() method's arguments, valid arguments "
                    f"name are [{','.join(names)}]"
                )
        func(**example_inputs)
    else:
        func(*_as_tuple(example_inputs))


def _warn_optimize(optimize) -> None:
    if optimize is not None:
        warnings.warn(
            "`optimize` is deprecated and has no effect. "
            "Use `with flambeau.jit.optimized_execution()` instead",
            FutureWarning,
            stacklevel=3,
        )


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs=True,
):
    """Runs ``func`` once with the example inputs, as tracing does, and returns ``func``.

    ``example_inputs`` is a tuple of positional arguments (a single Tensor is wrapped);
    ``example_kwarg_inputs`` a dict of keyword arguments. A module's ``forward`` runs
    through ``module(...)``. The trace check (``check_trace``, ``check_inputs``) compares
    a trace with the function it came from: here they are the same code, so it is skipped.

    >>> model = flambeau.nn.Linear(3, 1)
    >>> traced = flambeau.jit.trace(model, flambeau.ones(2, 3))
    >>> traced is model
    True
    """
    del check_trace, check_inputs, check_tolerance, strict, _force_outplace, _module_class
    del _compilation_unit, _store_inputs
    warn_deprecated("trace")
    _warn_optimize(optimize)
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")
    classes = _module_classes()
    if classes is not None and isinstance(func, classes[1]):
        warnings.warn(
            "The input to trace is already a ScriptModule, tracing it is a no-op. "
            "Returning the object as is.",
            stacklevel=2,
        )
        return func
    owner = getattr(func, "__self__", None)
    if classes is not None and isinstance(owner, classes[0]):
        if func.__name__ != "forward":
            raise AttributeError(
                "trace doesn't support compiling individual module's functions.\n"
                "Please use trace_module"
            )
        module = owner
    elif classes is not None and isinstance(func, classes[0]):
        module = func
    else:
        module = None
    if module is not None:
        if example_inputs is None:
            if example_kwarg_inputs is None:
                raise RuntimeError("example_kwarg_inputs should be a dict")
            example_inputs = example_kwarg_inputs
        _run_method(module, "forward", example_inputs, example_kwarg_inputs is not None)
    elif example_kwarg_inputs is not None:
        func(**example_kwarg_inputs)
    else:
        func(*_as_tuple(example_inputs))
    return func


def trace_module(
    mod,
    inputs,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg=False,
    _store_inputs=True,
):
    """Runs each named method of ``mod`` once with its example inputs; returns ``mod``.

    ``inputs`` maps method names to example inputs (a tuple, a Tensor, or with
    ``example_inputs_is_kwarg=True`` a dict of keyword arguments).

    >>> model = flambeau.nn.Linear(3, 1)
    >>> flambeau.jit.trace_module(model, {"forward": flambeau.ones(3)}) is model
    True
    """
    del check_trace, check_inputs, check_tolerance, strict, _force_outplace, _module_class
    del _compilation_unit, _store_inputs
    warn_deprecated("trace_module")
    _warn_optimize(optimize)
    classes = _module_classes()
    if classes is None or not isinstance(mod, classes[0]):
        raise AttributeError("expected flambeau.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for method_name, example_inputs in inputs.items():
        _run_method(mod, method_name, example_inputs, example_inputs_is_kwarg)
    return mod


def script_if_tracing(fn):
    """Compiles ``fn`` when called during tracing; flambeau never traces, so the
    returned wrapper just calls ``fn``.

    >>> @flambeau.jit.script_if_tracing
    ... def clip(x):
    ...     return x.clamp(0, 1)
    >>> clip(flambeau.tensor([-1.0, 2.0]))
    tensor([0., 1.])
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    # The attributes PyTorch's wrapper carries, which other code looks for.
    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


def _overload(func):
    """torch.jit._overload: declares a typed overload; the implementation defined after
    it under the same name replaces it, and is what runs."""
    return func


def _overload_method(func):
    """torch.jit._overload_method: _overload for methods."""
    return func
