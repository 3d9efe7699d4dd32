"""CppExtension and BuildExtension: packaged extensions built by setuptools.

setup(ext_modules=[CppExtension("myext", ["myext.cpp"])],
      cmdclass={"build_ext": BuildExtension})
"""

from __future__ import annotations

import copy
import sys

from setuptools import Extension
from setuptools.command.build_ext import build_ext

from . import _compiler


def CppExtension(name: str, sources, *args, **kwargs) -> Extension:
    """A setuptools Extension for C++ with flambeau's and pybind11's include directories
    (``flambeau/extension.h``), compiled as C++17.

    >>> from flambeau.utils.cpp_extension import CppExtension
    >>> ext = CppExtension("myext", ["myext.cpp"], extra_compile_args=["-O3"])
    >>> ext.name, ext.sources, ext.language
    ('myext', ['myext.cpp'], 'c++')
    >>> flambeau.get_include() in ext.include_dirs
    True
    """
    kwargs["include_dirs"] = [*kwargs.get("include_dirs", []), *_compiler.include_paths()]
    kwargs["language"] = "c++"
    return Extension(name, sources, *args, **kwargs)


_CUDA_MISSING = (
    "CUDA extensions need the CUDA plugin (flambeau-tensor-cuda), which is not installed: "
    "flambeau has no CUDA backend here"
)


def CUDAExtension(name: str, sources, *args, **kwargs):
    """Refused: building CUDA code needs the CUDA plugin.

    >>> from flambeau.utils.cpp_extension import CUDAExtension
    >>> try:
    ...     CUDAExtension("myext", ["myext.cu"])
    ... except RuntimeError as e:
    ...     print(e)
    CUDA extensions need the CUDA plugin (flambeau-tensor-cuda), which is not installed: ...
    """
    raise RuntimeError(_CUDA_MISSING)


class BuildExtension(build_ext):
    """setuptools' build_ext with what a flambeau extension needs: C++17, hidden
    visibility, ``TORCH_EXTENSION_NAME`` (and ``FLAMBEAU_EXTENSION_NAME``) defined as the
    module's name, and ``extra_compile_args`` given per compiler as PyTorch allows
    (``{"cxx": [...]}``). Objects compile with setuptools' compiler, in parallel when
    ``build_ext -j N`` is given; ``use_ninja`` is accepted for PyTorch's spelling.

    >>> from setuptools import Distribution
    >>> from flambeau.utils.cpp_extension import BuildExtension, CppExtension
    >>> dist = Distribution({"ext_modules": [CppExtension("myext", ["myext.cpp"])]})
    >>> cmd = BuildExtension.with_options(no_python_abi_suffix=True)(dist)
    >>> cmd.get_ext_filename("myext")
    'myext.so'
    """

    @classmethod
    def with_options(cls, **options):
        """A subclass with these constructor options:
        ``BuildExtension.with_options(use_ninja=False)``."""

        class BuildExtensionWithOptions(cls):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **{**options, **kwargs})

        return BuildExtensionWithOptions

    def __init__(self, *args, **kwargs):
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", True)
        super().__init__(*args, **kwargs)

    def build_extension(self, ext) -> None:
        ext = copy.copy(ext)
        args = ext.extra_compile_args
        if isinstance(args, dict):
            if args.get("nvcc"):
                raise RuntimeError(_CUDA_MISSING)
            args = args.get("cxx", [])
        module_name = ext.name.split(".")[-1]
        defaults = [] if sys.platform == "win32" else ["-std=c++17", "-fvisibility=hidden"]
        ext.extra_compile_args = [
            *defaults,
            f"-DTORCH_EXTENSION_NAME={module_name}",
            f"-DFLAMBEAU_EXTENSION_NAME={module_name}",
            *args,
        ]
        super().build_extension(ext)

    def get_ext_filename(self, ext_name: str) -> str:
        filename = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            # "myext.cpython-311-x86_64-linux-gnu.so" -> "myext.so"
            parts = filename.split(".")
            filename = ".".join([*parts[:-2], parts[-1]]) if len(parts) > 2 else filename
        return filename
