"""Where built extensions are kept, how they are named, and the lock around a build."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from pathlib import Path

import flambeau

from . import _compiler

# Written into a build directory after a successful build; holds the build's key.
# Its presence is what makes a directory a cache hit (a build killed half-way leaves
# none), so a later load rebuilds instead of importing a partial module.
STAMP = "flambeau_build.stamp"


def get_default_build_root() -> str:
    """The cache of built extensions when no environment variable says otherwise:
    ``$XDG_CACHE_HOME/flambeau_extensions`` (``~/.cache/flambeau_extensions``).

    >>> import os
    >>> from flambeau.utils.cpp_extension import get_default_build_root
    >>> os.path.basename(get_default_build_root())  # in $XDG_CACHE_HOME, else ~/.cache
    'flambeau_extensions'
    """
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(cache, "flambeau_extensions"))


def build_root() -> Path:
    """$FLAMBEAU_EXTENSIONS_DIR, else PyTorch's $TORCH_EXTENSIONS_DIR, else the default."""
    root = os.environ.get("FLAMBEAU_EXTENSIONS_DIR") or os.environ.get("TORCH_EXTENSIONS_DIR")
    return Path(root) if root else Path(get_default_build_root())


def build_key(name: str, sources: list[str], cflags, ldflags, include_dirs) -> str:
    """A hash of everything the built module depends on: the sources' contents, flags,
    include directories, compiler, Python, flambeau's version and its extension header.

    Headers the sources include from their own directories are not read: change a
    source (or pass a different flag) to rebuild after editing only a header.
    """
    h = hashlib.sha256()

    def add(*parts):
        for part in parts:
            data = part if isinstance(part, bytes) else str(part).encode()
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)

    add(
        name,
        sys.version,
        sys.implementation.cache_tag,
        flambeau.__version__,
        _compiler.compiler_identity(),
    )
    add(Path(flambeau.get_include(), "flambeau", "extension.h").read_bytes())
    add(*cflags, "|", *ldflags, "|", *include_dirs, "|")
    for src in sources:
        add(os.path.abspath(src), Path(src).read_bytes())
    return h.hexdigest()[:16]


def is_built(build_dir: Path, name: str, key: str) -> bool:
    stamp = build_dir / STAMP
    try:
        return stamp.read_text() == key and (build_dir / _compiler.module_filename(name)).exists()
    except OSError:
        return False


def mark_built(build_dir: Path, key: str) -> None:
    tmp = build_dir / f"{STAMP}.{os.getpid()}"
    tmp.write_text(key)
    os.replace(tmp, build_dir / STAMP)


def clear_stamp(build_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (build_dir / STAMP).unlink()


@contextlib.contextmanager
def build_lock(build_dir: Path):
    """An exclusive lock on build_dir for the duration of a build, held by one process
    at a time (released by the OS if the process dies)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / "lock", "a+b") as f:
        _lock(f)
        try:
            yield
        finally:
            _unlock(f)


if sys.platform == "win32":
    import msvcrt

    def _lock(f) -> None:
        while True:
            try:
                msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)
                return
            except OSError:  # LK_LOCK gives up after 10 s; keep waiting for the other build
                time.sleep(0.1)

    def _unlock(f) -> None:
        f.seek(0)
        msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(f) -> None:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)

    def _unlock(f) -> None:
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
