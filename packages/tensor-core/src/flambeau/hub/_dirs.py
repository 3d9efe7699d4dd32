"""Where flambeau.hub keeps downloaded repositories and checkpoints.

PyTorch resolves ``$TORCH_HOME/hub``, with ``$TORCH_HOME`` defaulting to
``$XDG_CACHE_HOME/torch`` and that to ``~/.cache/torch``; flambeau mirrors it with its
own names, so the two caches never mix: ``set_dir`` > ``$FLAMBEAU_HOME/hub`` >
``$XDG_CACHE_HOME/flambeau/hub`` > ``~/.cache/flambeau/hub``.
"""

from __future__ import annotations

import os

ENV_FLAMBEAU_HOME = "FLAMBEAU_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"

_hub_dir: str | None = None  # set by set_dir


def _get_flambeau_home() -> str:
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "flambeau")
    return os.path.expanduser(os.getenv(ENV_FLAMBEAU_HOME, default))


def get_dir() -> str:
    """The hub directory, where repositories and ``checkpoints/`` are cached.

    The directory :func:`set_dir` chose, else ``$FLAMBEAU_HOME/hub``, where
    ``$FLAMBEAU_HOME`` defaults to ``$XDG_CACHE_HOME/flambeau`` and
    ``$XDG_CACHE_HOME`` to ``~/.cache``.

    >>> import os
    >>> os.path.basename(flambeau.hub.get_dir())
    'hub'
    """
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_flambeau_home(), "hub")


def set_dir(d) -> None:
    """Makes ``d`` (``~`` expanded) the hub directory.

    >>> import os
    >>> previous = flambeau.hub.get_dir()
    >>> flambeau.hub.set_dir("~/models/hub")
    >>> flambeau.hub.get_dir() == os.path.expanduser("~/models/hub")
    True
    >>> flambeau.hub.set_dir(previous)
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)
