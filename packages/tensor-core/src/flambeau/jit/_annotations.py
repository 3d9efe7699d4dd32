"""Type hints for the TorchScript compiler; eagerly they pass values through.

``isinstance`` is the exception: it checks a value against a parameterized container
type (``List[int]``, ``Dict[str, Tensor]``, ``Optional[Tuple[int, str]]``) element by
element, as PyTorch's eager ``torch.jit.isinstance`` does.
"""

from __future__ import annotations

import builtins
import collections.abc
import types
import typing
import warnings

_python_isinstance = builtins.isinstance

# The containers that need their element types spelled out, and the names errors use.
_BARE_CONTAINERS = {
    dict: "dict",
    list: "list",
    tuple: "tuple",
    typing.Dict: "Dict",  # noqa: UP006 - the bare typing alias is what is refused
    typing.List: "List",  # noqa: UP006
    typing.Optional: "Optional",
    typing.Tuple: "Tuple",  # noqa: UP006
}


def annotate(the_type, the_value):
    """Tells the compiler the type of ``the_value``; returns ``the_value`` unchanged.

    >>> from typing import Dict
    >>> ages = flambeau.jit.annotate(Dict[str, int], {})
    >>> ages
    {}
    """
    del the_type
    return the_value


def Attribute(value, type):  # noqa: N802, A002 - PyTorch's names
    """Declares an attribute's type for the compiler; with the JIT disabled it is ``value``.

    >>> from typing import Dict
    >>> flambeau.jit.Attribute({}, Dict[str, int])
    {}
    """
    del type
    return value


def _require_contained_types(target_type) -> None:
    try:
        name = _BARE_CONTAINERS.get(target_type)
    except TypeError:  # an unhashable "type"
        return
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(
            f"Attempted to use {name} without contained types. Please add contained type, "
            f"e.g. {name}[int, int]"
        )
    raise RuntimeError(
        f"Attempted to use {name} without a contained type. Please add a contained type, "
        f"e.g. {name}[int]"
    )


def _warn_if_empty(obj) -> None:
    if _python_isinstance(obj, (list, dict, tuple)) and len(obj) == 0:
        warnings.warn(
            "The inner type of a container is lost when calling flambeau.jit.isinstance in "
            "eager mode. For example, List[int] would become list and therefore falsely "
            "return True for List[float] or List[str].",
            stacklevel=4,
        )


def _matches(obj, target_type) -> bool:
    origin = typing.get_origin(target_type)
    if origin is None:
        return _python_isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if not args:  # a bare typing.List inside another type
        _require_contained_types(target_type)
        return False
    if origin is list:
        _warn_if_empty(obj)
        return _python_isinstance(obj, list) and all(_matches(el, args[0]) for el in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return _python_isinstance(obj, dict) and all(
            _matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items()
        )
    if origin is tuple:
        _warn_if_empty(obj)
        if not _python_isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:  # Tuple[int, ...]
            return all(_matches(el, args[0]) for el in obj)
        return len(obj) == len(args) and all(map(_matches, obj, args))
    if origin is typing.Union or origin is types.UnionType:  # Optional[T] is Union[T, None]
        return any(_matches(obj, member) for member in args)
    return False  # Future[T], Callable[...]: not refinable


def isinstance(obj, target_type) -> bool:  # noqa: A001 - PyTorch's name
    """Whether ``obj`` is of ``target_type``, checking container element types too.

    ``target_type`` is a type, a parameterized ``List``/``Dict``/``Tuple``/``Optional``
    (or ``Union``), or a tuple of those. A bare ``List`` (or ``list``...) raises
    RuntimeError; an empty container warns, as its element type cannot be checked.

    >>> from typing import Dict, List, Optional
    >>> flambeau.jit.isinstance([flambeau.ones(2)], List[flambeau.Tensor])
    True
    >>> flambeau.jit.isinstance({"a": 1}, Dict[str, float])
    False
    >>> flambeau.jit.isinstance(None, Optional[List[int]])
    True
    """
    if _python_isinstance(target_type, tuple):
        return any(isinstance(obj, member) for member in target_type)
    if _python_isinstance(target_type, collections.abc.Container):
        raise RuntimeError(
            "The second argument to `flambeau.jit.isinstance` must be a type or a tuple of types"
        )
    _require_contained_types(target_type)
    return _matches(obj, target_type)


def _unwrap_optional(x):
    """torch.jit._unwrap_optional: ``x``, which must not be None."""
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x
