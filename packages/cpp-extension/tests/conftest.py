"""Extensions are compiled at test time with the system C++ compiler, into one build root
per test session (shared by the module-scoped fixtures, so each compiles once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="session", autouse=True)
def build_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("flambeau_extensions")
    old = os.environ.get("FLAMBEAU_EXTENSIONS_DIR")
    os.environ["FLAMBEAU_EXTENSIONS_DIR"] = str(root)
    yield root
    if old is None:
        del os.environ["FLAMBEAU_EXTENSIONS_DIR"]
    else:
        os.environ["FLAMBEAU_EXTENSIONS_DIR"] = old


@pytest.fixture(scope="session")
def swish_ext(build_root):
    """The example's fused activation kernels, built with load()."""
    from flambeau.utils.cpp_extension import load

    return load("swish_ext", [EXAMPLES / "swish.cpp"])
