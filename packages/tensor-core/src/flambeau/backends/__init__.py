"""Device backends from other distributions, loaded the first time their device is named.

A backend distribution declares an entry point in the group ``flambeau.backends``
whose name is its device type and whose value is its Python module::

    [project.entry-points."flambeau.backends"]
    testdev = "flambeau_testdev"

Importing that module registers the device with the core through the C ABI in
``flambeau/backend_abi.h`` (see ``flambeau.get_include()``). Nothing is loaded at
``import flambeau``: a backend loads when ``flambeau.device("testdev")``,
``tensor.to("testdev")``, ``flambeau.zeros(..., device="testdev")`` or
``flambeau.testdev`` first names it, or through :func:`load`.

Environment variables:

``FLAMBEAU_BACKEND_AUTOLOAD=0``
    Turns loading on first use off; :func:`load` still loads a backend.
``FLAMBEAU_BACKENDS=name,name``
    Only the named backends may load (the others are listed as blocked).

A backend that fails to load never breaks ``import flambeau`` or CPU work: the
failure is recorded and raised, chained to its cause, when its device is named.

PyTorch's per-library settings live in submodules, as in ``torch.backends``: ``cpu``,
``cuda``, ``cudnn``, ``mkl``, ``mkldnn``, ``mps``, ``nnpack``, ``openmp`` and
``opt_einsum``; each says what its settings do in flambeau.
"""

from __future__ import annotations

import os
import re
import threading
from typing import NamedTuple

from flambeau import _C

GROUP = "flambeau.backends"
AUTOLOAD_ENV = "FLAMBEAU_BACKEND_AUTOLOAD"
ALLOW_ENV = "FLAMBEAU_BACKENDS"
CORE_DIST = "flambeau-tensor-core"

__all__ = ["BackendInfo", "available", "load", "GROUP", "AUTOLOAD_ENV", "ALLOW_ENV"]


class BackendInfo(NamedTuple):
    """One installed backend, as :func:`available` reports it.

    >>> from flambeau.backends import BackendInfo
    >>> info = BackendInfo("testdev", "flambeau-testdev", "0.1", "not loaded", None)
    >>> info.name, info.status
    ('testdev', 'not loaded')
    """

    name: str  # the device type
    distribution: str | None
    version: str | None
    status: str  # "loaded", "failed", "blocked" or "not loaded"
    error: BaseException | None


# Re-entrant: a backend's module may name its own device while it loads.
_lock = threading.RLock()
_entry_points: dict | None = None  # device type -> EntryPoint, read once
_modules: dict = {}  # device type -> loaded module
_errors: dict = {}  # device type -> the exception its load raised
_loading: set = set()


def _installed() -> dict:
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        found = {}
        for ep in entry_points(group=GROUP):
            found.setdefault(ep.name, ep)  # the first distribution on sys.path wins
        _entry_points = found
    return _entry_points


def _autoload() -> bool:
    return os.environ.get(AUTOLOAD_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def _allowed(name: str) -> bool:
    allow = os.environ.get(ALLOW_ENV)
    if allow is None:
        return True
    return name in {n.strip() for n in allow.split(",") if n.strip()}


def _dist_of(ep):
    return getattr(ep, "dist", None)


def available() -> list[BackendInfo]:
    """Every installed backend: whether it loaded, and the error if it failed.

    >>> flambeau.backends.available()  # no backend plugin installed here
    []
    """
    out = []
    with _lock:
        for name, ep in sorted(_installed().items()):
            dist = _dist_of(ep)
            if name in _modules:
                status = "loaded"
            elif name in _errors:
                status = "failed"
            elif not _allowed(name):
                status = "blocked"
            else:
                status = "not loaded"
            out.append(
                BackendInfo(
                    name,
                    dist.metadata["Name"] if dist else None,
                    dist.version if dist else None,
                    status,
                    _errors.get(name),
                )
            )
    return out


def load(name: str):
    """Load the backend providing device type ``name`` (once) and return its module.

    Raises RuntimeError when none is installed, when ``FLAMBEAU_BACKENDS`` excludes
    it, or when it failed to load (then chained to the cause, every time it is asked for).

    >>> flambeau.backends.load("testdev")  # no backend plugin installed here
    Traceback (most recent call last):
      ...
    RuntimeError: no flambeau backend provides device type 'testdev': ...
    """
    with _lock:
        if name in _modules:
            return _modules[name]
        if name in _errors:
            _raise_recorded(name)
        ep = _installed().get(name)
        if ep is None:
            raise RuntimeError(
                f"no flambeau backend provides device type {name!r}: installed backends "
                f"are {sorted(_installed()) or 'none'} (entry point group {GROUP!r})"
            )
        if not _allowed(name):
            raise RuntimeError(
                f"the backend for device type {name!r} is installed but not allowed to "
                f"load: {ALLOW_ENV}={os.environ.get(ALLOW_ENV)!r}"
            )
        if name in _loading:  # re-entered from the backend's own import
            return None
        _loading.add(name)
        try:
            _check_distribution(ep)
            module = ep.load()
            if not _C._has_backend(name):
                raise ImportError(
                    f"{ep.value} was imported but registered no backend for device type "
                    f"{name!r} (flb_core_api.register_backend)"
                )
            _modules[name] = module
            return module
        except BaseException as e:  # recorded, then raised chained to it
            _errors[name] = e
            _raise_recorded(name)
        finally:
            _loading.discard(name)


def _raise_recorded(name: str):
    err = _errors[name]
    dist = _dist_of(_installed()[name])
    which = f"{dist.metadata['Name']} {dist.version}" if dist else name
    raise RuntimeError(
        f"the flambeau backend for device type {name!r} ({which}) failed to load: "
        f"{type(err).__name__}: {err}"
    ) from err


def _on_device_named(name: str) -> None:
    """Called by the core when a device type without a loaded backend is named."""
    if name in _modules or name not in _installed():
        return
    if name in _errors or _autoload():
        # Under the lock: another thread loading it makes this one wait; the
        # loading thread itself (the plugin naming its device) gets None back.
        load(name)
        return
    raise RuntimeError(
        f"device type {name!r} comes from an installed backend plugin, but loading on "
        f"first use is turned off ({AUTOLOAD_ENV}=0): call "
        f"flambeau.backends.load({name!r}) first"
    )


def module(name: str):
    """The Python module of the backend for ``name``, loading it if allowed; None if absent."""
    if name in _modules:
        return _modules[name]
    if name not in _installed():
        return None
    _on_device_named(name)
    return _modules.get(name)


# -- the first, Python layer of the version check: distribution requirements ---------


def _check_distribution(ep) -> None:
    """Refuse a backend whose distribution requires another flambeau-tensor-core."""
    from importlib.metadata import PackageNotFoundError, version

    dist = _dist_of(ep)
    if dist is None:
        return
    try:
        core = version(CORE_DIST)
    except PackageNotFoundError:  # a source checkout on sys.path
        return
    for req in dist.requires or []:
        problem = requirement_problem(req, CORE_DIST, core)
        if problem:
            raise ImportError(
                f"{dist.metadata['Name']} {dist.version} requires {problem}, but "
                f"{CORE_DIST} {core} is installed: "
                f"{_upgrade_hint(req, core, dist.metadata['Name'])}"
            )


def _release(v: str) -> tuple:
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", v)
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()


def _cmp(a: tuple, b: tuple) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def _satisfies(installed: str, op: str, want: str) -> bool:
    have = _release(installed)
    if want.endswith(".*"):
        prefix = _release(want[:-2])
        same = have[: len(prefix)] + (0,) * max(0, len(prefix) - len(have)) == prefix
        return same if op == "==" else not same
    w = _release(want)
    c = _cmp(have, w)
    if op == "~=":
        return c >= 0 and have[: len(w) - 1] == w[:-1]
    return {
        "==": c == 0,
        "===": installed == want,
        "!=": c != 0,
        ">=": c >= 0,
        "<=": c <= 0,
        ">": c > 0,
        "<": c < 0,
    }[op]


def requirement_problem(req: str, dist_name: str, installed: str) -> str | None:
    """The part of requirement ``req`` on ``dist_name`` that ``installed`` fails, or None.

    Release numbers only (pre-releases compare as their release); requirements
    under an extra or for another distribution are ignored.
    """
    body, _, marker = req.partition(";")
    if "extra" in marker:
        return None
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^)]*)\)?", body)
    if not m or re.sub(r"[-_.]+", "-", m.group(1)).lower() != dist_name:
        return None
    failed = []
    for spec in filter(None, (s.strip() for s in m.group(2).split(","))):
        sm = re.match(r"(===|==|!=|~=|>=|<=|>|<)\s*(\S+)", spec)
        if sm and not _satisfies(installed, sm.group(1), sm.group(2)):
            failed.append(spec)
    return f"{dist_name}{','.join(failed)}" if failed else None


def _upgrade_hint(req: str, installed: str, plugin: str) -> str:
    # A lower bound above what is installed: the core is too old; otherwise the plugin is.
    for _op, want in re.findall(r"(>=|>|~=|==)\s*([0-9][^,;)\s]*)", req):
        if not want.endswith(".*") and _cmp(_release(installed), _release(want)) < 0:
            from flambeau._siblings import install_hint

            return f"upgrade {CORE_DIST}. {install_hint(CORE_DIST)}"
    return f"upgrade {plugin} (pip install -U {plugin})"


# -- PyTorch's per-library settings (torch.backends.cudnn, ...) ---------------------------

# Submodules holding them, imported on first access (``import flambeau.backends.cudnn``
# works as well).
_SETTINGS_MODULES = frozenset(
    {"cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "nnpack", "openmp", "opt_einsum"}
)


def __getattr__(name):
    if name in _SETTINGS_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
