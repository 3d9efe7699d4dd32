"""Clear errors for flambeau subpackages whose distribution is not installed.

Sibling distributions add subpackages under ``flambeau`` (the core extends
``flambeau.__path__``). When one is missing, ``import flambeau.nn`` should say
which distribution to install rather than just "No module named".
"""

from __future__ import annotations

import importlib.abc
import sys

SIBLINGS = {
    "flambeau.autograd": "flambeau-autograd",
    "flambeau.nn": "flambeau-nn",
    "flambeau.optim": "flambeau-optim",
    "flambeau.multiprocessing": "flambeau-mp",
    "flambeau.utils.data": "flambeau-data",
    "flambeau.legacy": "flambeau-legacy",
}


class _MissingSiblingFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: reached only when no installed package provides the module."""

    def find_spec(self, fullname, path=None, target=None):
        for module, dist in SIBLINGS.items():
            # The module itself, a module inside it, or a package above it that only
            # the sibling provides (flambeau.utils for flambeau.utils.data).
            if (
                fullname == module
                or fullname.startswith(module + ".")
                or module.startswith(fullname + ".")
            ) and fullname != "flambeau":
                raise ImportError(
                    f"{module} is provided by the distribution '{dist}', which is not "
                    f"installed; install it with: pip install {dist}",
                    name=fullname,
                )
        return None


def install() -> None:
    if not any(isinstance(f, _MissingSiblingFinder) for f in sys.meta_path):
        sys.meta_path.append(_MissingSiblingFinder())
