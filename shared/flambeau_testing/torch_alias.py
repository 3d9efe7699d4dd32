"""``import torch`` (and ``import torch.nn.functional``, ...) answered by flambeau, so that a
third-party library written against PyTorch runs its own test suite on flambeau.

Importing it installs the alias (``nox -s thirdparty`` does so from a sitecustomize, so
that subprocesses and pytest-xdist workers have it too); :func:`install` does it again
harmlessly. Each ``torch.X`` module is the very ``flambeau.X`` module
(``sys.modules["torch.nn"] is flambeau.nn``); a submodule flambeau lacks fails to import
with ``ModuleNotFoundError`` as any missing module does.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


class _TorchIsFlambeau(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name != "torch" and not name.startswith("torch."):
            return None
        try:
            found = importlib.util.find_spec("flambeau" + name[len("torch") :])
        except ModuleNotFoundError:
            return None
        return None if found is None else importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("flambeau" + spec.name[len("torch") :])

    def exec_module(self, module):
        """The flambeau module ran when it was imported."""


def install() -> None:
    """Answer ``import torch`` with flambeau from now on (once; refuses a loaded torch)."""
    if any(isinstance(f, _TorchIsFlambeau) for f in sys.meta_path):
        return
    if "torch" in sys.modules and not sys.modules["torch"].__name__.startswith("flambeau"):
        raise RuntimeError("PyTorch is already imported: install the alias before it is")
    sys.meta_path.insert(0, _TorchIsFlambeau())


install()
