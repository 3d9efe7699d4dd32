"""``flambeau.hub``: PyTorch's ``torch.hub``, loading models and checkpoints by name.

``load`` calls an entry point of a repository's ``hubconf.py`` (a GitHub repository,
downloaded and cached, or a local directory); ``load_state_dict_from_url`` downloads a
checkpoint once and reads it with ``flambeau.load``, which reads ``torch.save`` files,
so PyTorch's published weights load. Downloads and repositories are cached in
:func:`get_dir` (``$FLAMBEAU_HOME/hub``, by default ``~/.cache/flambeau/hub``).
"""

# torch.hub's module constants come along, under flambeau's names where they differ
# (ENV_FLAMBEAU_HOME for ENV_TORCH_HOME).
from flambeau.hub._checkpoints import HASH_REGEX, load_state_dict_from_url  # noqa: F401
from flambeau.hub._dirs import (  # noqa: F401
    DEFAULT_CACHE_DIR,
    ENV_FLAMBEAU_HOME,
    ENV_XDG_CACHE_HOME,
    get_dir,
    set_dir,
)
from flambeau.hub._download import READ_DATA_CHUNK, download_url_to_file  # noqa: F401
from flambeau.hub._github import ENV_GITHUB_TOKEN  # noqa: F401
from flambeau.hub._repos import MODULE_HUBCONF, VAR_DEPENDENCY, help, list, load  # noqa: F401

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]
