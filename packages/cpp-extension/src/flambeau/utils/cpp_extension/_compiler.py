"""Compiling an extension module with the system C++ compiler: through ninja when it is
installed (parallel, incremental), else one compiler call per source and a link."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import flambeau


def compiler() -> str:
    """The C++ compiler: $CXX, else ``c++`` (``cl`` on Windows)."""
    return os.environ.get("CXX") or ("cl" if sys.platform == "win32" else "c++")


def compiler_identity() -> str:
    """Names the compiler for the cache key without running it: its resolved path, size
    and modification time, which change when it is upgraded (running ``c++ --version``
    would cost a process start on every cached load)."""
    cxx = shlex.split(compiler())
    path = shutil.which(cxx[0])
    if path is None:
        return compiler()
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{compiler()}|{real}|{st.st_size}|{st.st_mtime_ns}"


def include_paths() -> list[str]:
    """flambeau's headers (flambeau/extension.h), pybind11's, and Python's."""
    import pybind11

    return [flambeau.get_include(), pybind11.get_include(), sysconfig.get_paths()["include"]]


def module_filename(name: str) -> str:
    return name + sysconfig.get_config_var("EXT_SUFFIX")


def default_cflags(name: str) -> list[str]:
    # -fvisibility=hidden: each module keeps its own copy of the header's inline classes
    # and of pybind11's internals (as pybind11 recommends).
    return [
        "-O2",
        "-std=c++17",
        "-fPIC",
        "-fvisibility=hidden",
        f"-DTORCH_EXTENSION_NAME={name}",
        f"-DFLAMBEAU_EXTENSION_NAME={name}",
    ]


def default_ldflags() -> list[str]:
    # Python's symbols come from the interpreter loading the module.
    return ["-shared", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]


def ninja_binary() -> str | None:
    try:
        import ninja

        path = os.path.join(ninja.BIN_DIR, "ninja")
        if os.path.exists(path):
            return path
    except ImportError:
        pass
    return shutil.which("ninja")


def build(
    name: str,
    sources: list[str],
    build_dir: Path,
    cflags: list[str],
    ldflags: list[str],
    include_dirs: list[str],
    verbose: bool,
) -> Path:
    """Compiles and links sources into build_dir/<module file>; RuntimeError with the
    compiler's output when that fails."""
    cxx = shlex.split(compiler())
    includes = [f"-I{d}" for d in include_dirs]
    target = build_dir / module_filename(name)
    objects = [f"{Path(s).stem}_{i}.o" for i, s in enumerate(sources)]
    ninja = ninja_binary()
    if ninja is not None:
        _write_ninja_file(
            build_dir, cxx, [*includes, *cflags], ldflags, sources, objects, target.name
        )
        commands = [[ninja, "-v"]]
    else:
        compile_cmds = [
            [*cxx, *includes, *cflags, "-c", src, "-o", obj] for src, obj in zip(sources, objects)
        ]
        commands = [*compile_cmds, [*cxx, *objects, *ldflags, "-o", target.name]]
    for cmd in commands:
        if verbose:
            print(shlex.join(cmd), flush=True)
        proc = subprocess.run(cmd, cwd=build_dir, capture_output=True, text=True)
        if verbose and (proc.stdout or proc.stderr):
            print(proc.stdout + proc.stderr, flush=True)
        if proc.returncode != 0:
            raise RuntimeError(f"Error building extension '{name}':\n{proc.stdout}{proc.stderr}")
    return target


def _write_ninja_file(build_dir, cxx, cflags, ldflags, sources, objects, target) -> None:
    flags, path = _ninja_flag, _ninja_path
    lines = [
        "ninja_required_version = 1.3",
        f"cxx = {' '.join(flags(c) for c in cxx)}",
        f"cflags = {' '.join(flags(f) for f in cflags)}",
        f"ldflags = {' '.join(flags(f) for f in ldflags)}",
        "",
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "",
        "rule link",
        "  command = $cxx $in $ldflags -o $out",
        "",
    ]
    lines += [f"build {path(obj)}: compile {path(src)}" for src, obj in zip(sources, objects)]
    lines += [
        "",
        f"build {path(target)}: link {' '.join(path(o) for o in objects)}",
        f"default {path(target)}",
        "",
    ]
    text = "\n".join(lines)
    ninja_file = build_dir / "build.ninja"
    # Rewritten only when it changes: ninja rebuilds everything when its rules do.
    if not ninja_file.exists() or ninja_file.read_text() != text:
        ninja_file.write_text(text)


def _ninja_flag(text: str) -> str:
    """A word of a command, in a ninja variable: shell-quoted, "$" escaped."""
    return shlex.quote(text).replace("$", "$$")


def _ninja_path(text: str) -> str:
    """A path in a ninja build line ($in and $out are not shell-quoted: avoid spaces)."""
    return text.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")
