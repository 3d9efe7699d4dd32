"""How much of PyTorch's public API flambeau provides, namespace by namespace.

``python -m flambeau_coverage`` (torch and flambeau importable; ``nox -s coverage``)
prints, for each namespace of NAMESPACES, the public names torch 2.13 has, how many of
them flambeau has, and the ones it lacks. Names are counted by ``names.public_names``.
``omissions.toml`` lists, with one reason each, the names flambeau lacks on purpose
(they still count as missing) and the names that belong to namespaces other issues
build (TorchScript, CUDA, ...: left out of the count). ``present.txt`` records the
names flambeau has, so a test without torch keeps them from disappearing
(``--write-present`` rewrites it).
"""

from .namespaces import NAMESPACES, Namespace

__all__ = ["NAMESPACES", "Namespace"]
