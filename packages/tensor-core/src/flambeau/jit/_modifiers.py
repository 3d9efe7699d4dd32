"""Decorators that tell the TorchScript compiler how to treat a function.

flambeau compiles nothing, so the decorated function runs as written (``@unused``
code runs too, as it does under PyTorch with the JIT disabled). Each still marks the
function, as PyTorch does, for code that inspects the mark.
"""

from __future__ import annotations

import warnings

# The attribute PyTorch stores the mark in, and the marks it uses.
_MODIFIER = "_torchscript_modifier"
EXPORT = "export (compile this function even if nothing calls it)"
IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
UNUSED = "unused (ignored and replaced with raising of an exception)"
DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def _mark(fn, modifier: str):
    setattr(fn, _MODIFIER, modifier)
    return fn


def export(fn):
    """Marks a method of an ``nn.Module`` as an entry point of its scripted form.

    Returns ``fn`` itself: the method runs as written.

    >>> class Doubler(flambeau.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    ...     @flambeau.jit.export
    ...     def twice(self, x):
    ...         return self(self(x))
    >>> flambeau.jit.script(Doubler()).twice(flambeau.ones(2))
    tensor([4., 4.])
    """
    return _mark(fn, EXPORT)


def unused(fn):
    """Marks a function the compiler replaces with a ``raise``; eagerly it runs as written.

    Accepts a ``property`` too (its getter and setter are marked).

    >>> @flambeau.jit.unused
    ... def debug_only(x):
    ...     return x + 1
    >>> debug_only(flambeau.zeros(2))
    tensor([1., 1.])
    """
    if isinstance(fn, property):
        for accessor in (fn.fget, fn.fset):
            if accessor is not None:
                _mark(accessor, UNUSED)
        return fn
    return _mark(fn, UNUSED)


def ignore(drop=False, **kwargs):
    """Marks a function the compiler leaves to Python; used bare or as ``ignore(drop=...)``.

    ``drop=True`` (deprecated, as in PyTorch: use :func:`unused`) marks it as unused.

    >>> @flambeau.jit.ignore
    ... def helper(x):
    ...     return x.sum().item()
    >>> helper(flambeau.ones(3))
    3.0
    """
    if callable(drop):  # used bare: @ignore
        return _mark(drop, IGNORE)
    if not isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @flambeau.jit.ignore must be a bool or a function but got {drop}"
        )
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn(
            "ignore(drop_on_export=True) has been deprecated. TorchScript will now drop the "
            "function call on compilation. Use flambeau.jit.unused now.",
            FutureWarning,
            stacklevel=2,
        )
        drop = drop_on_export
    elif drop:
        warnings.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the function call on "
            "compilation. Use flambeau.jit.unused now.",
            FutureWarning,
            stacklevel=2,
        )

    def decorator(fn):
        return _mark(fn, UNUSED if drop else IGNORE)

    return decorator


def _drop(fn):
    """torch.jit._drop: the compiler skips the function entirely; it runs eagerly."""
    return _mark(fn, DROP)
