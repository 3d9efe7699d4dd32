"""Extracting downloaded ZIP files without letting an entry write outside the target."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

_PATH_SEPARATORS = re.compile(r"[/\\]")


def safe_extract(zip_file: zipfile.ZipFile, extract_to) -> None:
    """Extracts every entry under ``extract_to``; an absolute path, a ``..`` component or
    an entry that resolves outside it (a "zip slip") raises ValueError first."""
    root = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (name[1:2] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in _PATH_SEPARATORS.split(name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
    zip_file.extractall(root)
