"""Sphinx configuration for flambeau's site (`nox -s docs` builds it with -W)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "flambeau"
author = "the flambeau developers"
copyright = "2026, the flambeau developers"
try:  # the API pages need the installed wheels; nox -s docs installs them
    import flambeau

    release = getattr(flambeau, "__version__", "")
except ImportError:
    release = ""

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "flambeau_ops",  # docs/_ext/flambeau_ops.py: the operator tables
    "flambeau_schema",  # docs/_ext/flambeau_schema.py: schemas as signatures
    "flambeau_omissions",  # docs/_ext/flambeau_omissions.py: differences from PyTorch
]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
html_theme = "furo"
html_title = "flambeau"
