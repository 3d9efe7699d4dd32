"""load() and load_inline(): build a C++ extension on first use, import it from the
cache afterwards (see _cache for the key and the lock)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from . import _cache, _compiler

_CUDA_MISSING = (
    "CUDA sources need the CUDA plugin (flambeau-tensor-cuda), which is not installed: "
    "flambeau has no CUDA backend here, so only C++ sources can be built"
)


def load(
    name: str,
    sources,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
    with_cuda=None,
    is_python_module: bool = True,
    is_standalone: bool = False,
    keep_intermediates: bool = True,
):
    """Compiles C++ sources into an extension module and imports it.

    The module is built once, into ``<build root>/<name>_<hash>`` (the root is
    ``$FLAMBEAU_EXTENSIONS_DIR``, ``$TORCH_EXTENSIONS_DIR`` or ``~/.cache/flambeau_extensions``;
    ``build_directory`` replaces the whole path), where the hash covers the sources,
    flags, compiler, Python and flambeau's version; later calls, in any process, import
    it without compiling. A failed compile raises RuntimeError with the compiler's
    output. Sources see ``TORCH_EXTENSION_NAME`` (and ``FLAMBEAU_EXTENSION_NAME``)
    defined as ``name``, for ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)``.

    Returns the module, or the library's path when ``is_python_module`` is False (the
    library is then loaded into the process so that its static initialisers run).

    >>> from flambeau.utils.cpp_extension import load
    >>> try:
    ...     load("myext", ["no_such_file.cpp"])
    ... except FileNotFoundError as e:
    ...     print(e)
    load('myext'): source file not found: .../no_such_file.cpp
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    sources = [os.path.abspath(os.fspath(s)) for s in sources]
    if with_cuda or any(s.endswith((".cu", ".cuh")) for s in sources):
        raise RuntimeError(_CUDA_MISSING)
    if is_standalone:
        raise NotImplementedError("load(is_standalone=True): building executables is not supported")
    if missing := [s for s in sources if not os.path.isfile(s)]:
        raise FileNotFoundError(f"load('{name}'): source file not found: {missing[0]}")
    return _build_and_import(
        name,
        sources,
        list(extra_cflags or []),
        list(extra_ldflags or []),
        [os.path.abspath(p) for p in extra_include_paths or []],
        build_directory,
        verbose,
        is_python_module,
        keep_intermediates,
    )


def load_inline(
    name: str,
    cpp_sources,
    cuda_sources=None,
    functions=None,
    extra_cflags=None,
    extra_cuda_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose: bool = False,
    with_cuda=None,
    is_python_module: bool = True,
    with_pytorch_error_handling: bool = True,
    keep_intermediates: bool = True,
):
    """Builds an extension from C++ source text, as ``load`` does from files.

    ``#include <flambeau/extension.h>`` is put in front of the sources; ``functions``
    (a name, a list of names, or a dict name -> docstring) are bound in a generated
    ``PYBIND11_MODULE`` block, so the sources need none.

    >>> from flambeau.utils.cpp_extension import load_inline
    >>> try:
    ...     load_inline("myext", cpp_sources=[], cuda_sources=["__global__ void k() {}"])
    ... except RuntimeError as e:
    ...     print(e)
    CUDA sources need the CUDA plugin (flambeau-tensor-cuda), which is not installed: ...
    """
    if cuda_sources or with_cuda:
        raise RuntimeError(_CUDA_MISSING)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    text = "\n".join(["#include <flambeau/extension.h>", *cpp_sources, _module_block(functions)])
    cflags = list(extra_cflags or [])
    ldflags = list(extra_ldflags or [])
    include_dirs = [os.path.abspath(p) for p in extra_include_paths or []]
    build_dir = _build_dir(
        name, build_directory, _cache.build_key(name, [], cflags, ldflags, include_dirs) + text
    )
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / "main.cpp"
    # Rewritten only when it changes, so that ninja does not recompile an unchanged source.
    if not source.exists() or source.read_text() != text:
        source.write_text(text)
    return _build_and_import(
        name, [str(source)], cflags, ldflags, include_dirs, str(build_dir), verbose,
        is_python_module, keep_intermediates,
    )  # fmt: skip


def _module_block(functions) -> str:
    if not functions:
        return ""
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, dict):
        items = functions.items()
    else:
        items = [(f, None) for f in functions]
    lines = ["", "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
    for fname, doc in items:
        doc_arg = f", {_cpp_string(doc)}" if doc else ""
        lines.append(f'  m.def("{fname}", &{fname}{doc_arg});')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _build_dir(name: str, build_directory, key_material: str) -> Path:
    if build_directory is not None:
        return Path(build_directory)
    import hashlib

    digest = hashlib.sha256(key_material.encode()).hexdigest()[:16]
    return _cache.build_root() / f"{name}_{digest}"


def _build_and_import(
    name, sources, extra_cflags, extra_ldflags, extra_include_paths, build_directory, verbose,
    is_python_module, keep_intermediates,
):  # fmt: skip
    if not name.isidentifier():
        raise ValueError(f"extension name must be a valid Python identifier, got {name!r}")
    include_dirs = [*extra_include_paths, *_compiler.include_paths()]
    # User flags last, so that they override the defaults (-O3 after -O2).
    cflags = [*_compiler.default_cflags(name), *extra_cflags]
    ldflags = [*_compiler.default_ldflags(), *extra_ldflags]
    key = _cache.build_key(name, sources, cflags, ldflags, include_dirs)
    build_dir = (
        Path(build_directory)
        if build_directory is not None
        else _cache.build_root() / f"{name}_{key}"
    )
    if not _cache.is_built(build_dir, name, key):
        with _cache.build_lock(build_dir):
            # Another process may have built it while this one waited for the lock.
            if not _cache.is_built(build_dir, name, key):
                if verbose:
                    print(f"Building extension module {name} in {build_dir}...", flush=True)
                _cache.clear_stamp(build_dir)
                _compiler.build(name, sources, build_dir, cflags, ldflags, include_dirs, verbose)
                _cache.mark_built(build_dir, key)
                if not keep_intermediates:
                    _remove_intermediates(build_dir)
    if verbose:
        print(f"Loading extension module {name} from {build_dir}...", flush=True)
    path = build_dir / _compiler.module_filename(name)
    if not is_python_module:
        import ctypes

        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        return str(path)
    return _import_module(name, path)


# Module name -> the file it was imported from, in this process.
_LOADED: dict[str, Path] = {}


def _import_module(name: str, path: Path):
    if name in _LOADED:
        if _LOADED[name] == path and name in sys.modules:
            return sys.modules[name]
        if _LOADED[name] != path:
            # CPython keeps one extension module per name: importing the new build would
            # hand back the old one's functions.
            raise RuntimeError(
                f"The extension module '{name}' was already loaded in this process from "
                f"{_LOADED[name]}; a different build of it ({path}) cannot be loaded beside it. "
                f"Restart the process, or give the new build another name."
            )
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    _LOADED[name] = path
    return module


def _remove_intermediates(build_dir: Path) -> None:
    for f in build_dir.iterdir():
        if f.suffix in (".o", ".d") or f.name.endswith(".o.d"):
            f.unlink()
