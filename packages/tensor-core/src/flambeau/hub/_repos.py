"""Entry points of a repository's ``hubconf.py``: ``list``, ``help`` and ``load``.

A hub repository (on GitHub, or a local directory) has a ``hubconf.py`` whose public
callables are its entry points, and optionally a ``dependencies`` list of module
names that must be importable (else RuntimeError names the missing ones). hubconf.py
runs with the repository's directory first on ``sys.path``, so it imports its
siblings.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys

from flambeau.hub._github import get_cache_or_reload

VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"


@contextlib.contextmanager
def _add_to_sys_path(path: str):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str):
    """Runs the repository's hubconf.py (the caller has put repo_dir on sys.path)."""
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_dependencies(hubconf) -> None:
    dependencies = getattr(hubconf, VAR_DEPENDENCY, None)
    if dependencies is None:
        return
    missing = [name for name in dependencies if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(hubconf, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    # A dependency that hubconf.py imports at its top fails earlier, with Python's own
    # ImportError: the list can only be read once hubconf.py has run.
    _check_dependencies(hubconf)
    entry = getattr(hubconf, model, None) if model in dir(hubconf) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entry points (public callables of ``hubconf.py``) of the GitHub repository
    ``github`` ("repo_owner/repo_name[:ref]"; without a ref, main, else master).

    ``force_reload`` downloads again even when cached; ``skip_validation`` skips the
    GitHub API check that the ref belongs to this repository (not a fork);
    ``trust_repo`` is "check" (ask unless trusted), True (trust and remember) or False
    (always ask); ``verbose=False`` silences the "Using cache" message.

    >>> import zipfile, tempfile, os
    >>> def serve_zipball(url, dst, hash_prefix=None, progress=True):
    ...     with zipfile.ZipFile(dst, "w") as zf:  # the layout GitHub serves
    ...         zf.writestr("me-tiny-0a1b2c/hubconf.py", "def tiny():\\n    return 1\\n")
    >>> real_download = flambeau.hub.download_url_to_file
    >>> flambeau.hub.download_url_to_file = serve_zipball  # offline, for this example
    >>> previous = flambeau.hub.get_dir()
    >>> with tempfile.TemporaryDirectory() as d:
    ...     flambeau.hub.set_dir(d)
    ...     flambeau.hub.list("me/tiny:main", trust_repo=True, skip_validation=True)
    ... # doctest: +ELLIPSIS
    Downloading: "https://github.com/me/tiny/zipball/main" to .../main.zip
    ['tiny']
    >>> flambeau.hub.download_url_to_file = real_download
    >>> flambeau.hub.set_dir(previous)
    """
    repo_dir = get_cache_or_reload(
        github, force_reload, trust_repo, verbose=verbose, skip_validation=skip_validation
    )
    with _add_to_sys_path(repo_dir):
        hubconf = _import_hubconf(repo_dir)
    # Names starting with "_" are the repository's helpers.
    return [
        name
        for name in dir(hubconf)
        if callable(getattr(hubconf, name)) and not name.startswith("_")
    ]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of the entry point ``model`` of the GitHub repository ``github``
    (arguments as for :func:`list`).

    >>> import zipfile, tempfile
    >>> def serve_zipball(url, dst, hash_prefix=None, progress=True):
    ...     with zipfile.ZipFile(dst, "w") as zf:
    ...         zf.writestr(
    ...             "me-tiny-0a1b2c/hubconf.py", 'def tiny():\\n    "A tiny model."\\n'
    ...         )
    >>> real_download = flambeau.hub.download_url_to_file
    >>> flambeau.hub.download_url_to_file = serve_zipball  # offline, for this example
    >>> previous = flambeau.hub.get_dir()
    >>> with tempfile.TemporaryDirectory() as d:
    ...     flambeau.hub.set_dir(d)
    ...     flambeau.hub.help("me/tiny:main", "tiny", trust_repo=True, skip_validation=True)
    ... # doctest: +ELLIPSIS
    Downloading: "https://github.com/me/tiny/zipball/main" to .../main.zip
    'A tiny model.'
    >>> flambeau.hub.download_url_to_file = real_download
    >>> flambeau.hub.set_dir(previous)
    """
    repo_dir = get_cache_or_reload(
        github, force_reload, trust_repo, verbose=True, skip_validation=skip_validation
    )
    with _add_to_sys_path(repo_dir):
        hubconf = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(hubconf, model).__doc__


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo="check",
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Calls the entry point ``model`` of a hub repository with ``*args, **kwargs`` and
    returns its result (typically a model, possibly with pretrained weights).

    ``source="github"``: ``repo_or_dir`` is "repo_owner/repo_name[:ref]", fetched into
    the hub directory (the other arguments as for :func:`list`). ``source="local"``: it
    is a directory with a ``hubconf.py``; nothing is downloaded.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as repo:
    ...     with open(os.path.join(repo, "hubconf.py"), "w") as f:
    ...         _ = f.write("import flambeau\\n"
    ...                     "dependencies = ['flambeau']\\n"
    ...                     "def linear(n):\\n"
    ...                     "    return flambeau.nn.Linear(n, 1)\\n")
    ...     model = flambeau.hub.load(repo, "linear", 3, source="local")
    >>> model
    Linear(in_features=3, out_features=1, bias=True)
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = get_cache_or_reload(
            repo_or_dir, force_reload, trust_repo, verbose=verbose, skip_validation=skip_validation
        )
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    # The entry point runs with the directory still on sys.path: it may import lazily.
    hubconf_dir = os.fspath(hubconf_dir)
    with _add_to_sys_path(hubconf_dir):
        hubconf = _import_hubconf(hubconf_dir)
        entry = _load_entry_from_hubconf(hubconf, model)
        return entry(*args, **kwargs)
