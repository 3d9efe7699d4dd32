"""Clear errors for flambeau subpackages whose distribution is not installed.

Sibling distributions add subpackages under ``flambeau`` (the core extends
``flambeau.__path__``). When one is missing, ``import flambeau.nn`` (or
``flambeau.nn`` after ``import flambeau``) should say which distribution to install
and how, rather than just "No module named".
"""

from __future__ import annotations

import sys

# The subpackage each sibling distribution provides, and the folder of this repository
# it is built from.
SIBLINGS = {
    "flambeau.autograd": ("flambeau-autograd", "packages/autograd"),
    "flambeau.distributions": ("flambeau-autograd", "packages/autograd"),
    "flambeau.func": ("flambeau-autograd", "packages/autograd"),
    "flambeau.nn": ("flambeau-nn", "packages/nn"),
    "flambeau.fx": ("flambeau-nn", "packages/nn"),
    "flambeau.optim": ("flambeau-optim", "packages/optim"),
    "flambeau.multiprocessing": ("flambeau-mp", "packages/mp"),
    "flambeau.utils.data": ("flambeau-data", "packages/data"),
    "flambeau.utils.checkpoint": ("flambeau-autograd", "packages/autograd"),
    "flambeau.utils.cpp_extension": ("flambeau-cpp-extension", "packages/cpp-extension"),
    "flambeau.legacy": ("flambeau-legacy", "packages/legacy"),
    "flambeau.distributed": ("flambeau-distributed", "packages/distributed"),
}
# The flambeau distributions each sibling needs besides the core (its pyproject's
# dependencies), so that an install command names all of them.
NEEDS = {
    "flambeau-nn": ("flambeau-autograd",),
    "flambeau-optim": ("flambeau-autograd",),
    "flambeau-data": ("flambeau-mp",),
}
# Their names as attributes of flambeau (flambeau.utils is the core's own).
TOP_LEVEL = frozenset(m.split(".")[1] for m in SIBLINGS if m.count(".") == 1)


def install_hint(dist: str) -> str:
    """Commands that install `dist` from a flambeau checkout (none is on a package index).

    `dist` is a sibling distribution, or the core itself (`flambeau-tensor-core`, when an
    upgrade of it is needed); the commands install the flambeau packages it needs too.
    """
    folders = {"flambeau-tensor-core": "packages/tensor-core"}
    folders.update((d, folder) for d, folder in SIBLINGS.values())
    needed = [folders[d] for d in (*NEEDS.get(dist, ()), dist) if d in folders]
    short = folders.get(dist, dist).rsplit("/", 1)[-1]
    return (
        "flambeau's packages are not on a package index yet. From the top folder of a "
        f"flambeau source checkout: `python3 -m nox -s install -- {short}` builds the wheels "
        "and installs them into the python3 on PATH; with the wheels `nox -s build` made: "
        f"pip install --find-links dist {dist}; from the sources: pip install "
        + " ".join("./" + folder for folder in needed)
    )


def missing_message(module: str) -> str:
    dist, _ = SIBLINGS[module]
    return f"{module} is provided by the distribution '{dist}', which is not installed. " + (
        install_hint(dist)
    )


class _MissingSiblingFinder:
    """Last on sys.meta_path: reached only when no installed package provides the module.

    A meta path finder needs only find_spec; not deriving from importlib.abc keeps that
    module (7 ms) out of `import flambeau`.
    """

    def find_spec(self, fullname, path=None, target=None):
        for module in SIBLINGS:
            if fullname.startswith(module + ".") and module in sys.modules:
                return None  # the sibling is installed; only this submodule does not exist
            # The module itself, a module inside it, or a package above it that only
            # the sibling provides (flambeau.utils for flambeau.utils.data).
            if (
                fullname == module
                or fullname.startswith(module + ".")
                or module.startswith(fullname + ".")
            ) and fullname != "flambeau":
                # ModuleNotFoundError, as Python raises for a missing module (so that
                # pytest.importorskip and `except ModuleNotFoundError` treat it alike).
                raise ModuleNotFoundError(missing_message(module), name=fullname)
        return None


def install() -> None:
    if not any(isinstance(f, _MissingSiblingFinder) for f in sys.meta_path):
        sys.meta_path.append(_MissingSiblingFinder())
