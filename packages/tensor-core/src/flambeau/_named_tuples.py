"""Named result tuples for Python-level functions, published in ``flambeau.return_types``
like the core's own (so ``flambeau.return_types.histogram`` exists and results pickle)."""

from __future__ import annotations

import collections


def named_tuple(name: str, fields: tuple[str, ...]):
    """The result type ``flambeau.return_types.<name>``, created on first use."""
    from flambeau import return_types  # loaded lazily, as ``import flambeau`` promises

    existing = getattr(return_types, name, None)
    if existing is not None and getattr(existing, "_fields", None) == fields:
        return existing
    nt = collections.namedtuple(name, fields)
    nt.__module__ = "flambeau.return_types"
    setattr(return_types, name, nt)
    return nt
