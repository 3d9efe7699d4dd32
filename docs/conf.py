"""Sphinx configuration for flambeau's site (`nox -s docs` builds it with -W)."""

import doctest
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "flambeau"
author = "the flambeau developers"
copyright = "2026, the flambeau developers"
try:  # the API pages need the installed wheels; nox -s docs installs them
    import flambeau

    release = flambeau.version.flambeau  # (flambeau.__version__ names PyTorch's API level)
except ImportError:
    release = ""

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.napoleon",
    "flambeau_ops",  # docs/_ext/flambeau_ops.py: the operator tables
    "flambeau_schema",  # docs/_ext/flambeau_schema.py: schemas as signatures
    "flambeau_omissions",  # docs/_ext/flambeau_omissions.py: differences from PyTorch
    "flambeau_reference",  # docs/_ext/flambeau_reference.py: an entry for every public name
    "flambeau_docstrings",  # docs/_ext/flambeau_docstrings.py: plain-text docstrings as text
]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
html_theme = "furo"
html_title = "flambeau"

# `sphinx-build -b doctest` (nox -s docs) runs every example of the guides and of the
# API pages. Outputs are compared loosely: "..." matches anything (addresses, timings).
doctest_global_setup = """
import importlib.util
import flambeau
"""
doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
