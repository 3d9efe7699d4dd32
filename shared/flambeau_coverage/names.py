"""Which names of a namespace count as its public API, for torch and flambeau alike."""

from __future__ import annotations

import sys
import types

# Names torch exposes that are switches of its own build, not API a program calls.
NOT_API = frozenset({"TYPE_CHECKING", "USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH"})

_STDLIB = frozenset(sys.stdlib_module_names) | {"typing_extensions"}


def _from_stdlib(obj: object) -> bool:
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or isinstance(obj, (bool, int, float, complex, str)):
        return False
    return module.split(".")[0] in _STDLIB


def _doc_table(obj: object) -> bool:
    """A dict of strings: the docstring templates torch keeps (``fft.common_args``)."""
    return isinstance(obj, dict) and bool(obj) and all(isinstance(v, str) for v in obj.values())


def public_names(namespace: object, top: object = None) -> set[str]:
    """The public names of a module or class.

    A name counts unless it starts with "_"; is a module (submodules are namespaces of
    their own); is something the standard library or typing defines (``Optional``,
    ``contextmanager`` imported for the module's own use); is a string or a dict of
    strings (the docstring fragments torch keeps in its modules); is an undocumented
    callable or class (torch binds hundreds of internal kernels and TorchScript types
    without a docstring); is the root module's (``top``) ``Tensor`` re-imported for
    annotations (``torch.fft.Tensor``); or is a build switch of torch's own (NOT_API).
    """
    names = set()
    for name in dir(namespace):
        if name.startswith("_") or name in NOT_API:
            continue
        try:
            obj = getattr(namespace, name)
        except Exception:  # a lazy attribute that fails to load still names API
            names.add(name)
            continue
        if isinstance(obj, (types.ModuleType, str)) or _from_stdlib(obj) or _doc_table(obj):
            continue
        if callable(obj) and not getattr(obj, "__doc__", None):
            continue
        if name == "Tensor" and namespace is not top and obj is getattr(top, "Tensor", None):
            continue
        names.add(name)
    return names
