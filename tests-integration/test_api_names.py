"""PyTorch names that flambeau has keep existing (no torch needed).

shared/flambeau_coverage/present.txt lists them; `python -m flambeau_coverage
--write-present` (torch installed, `nox -s coverage`) rewrites it as names are added.
A namespace whose package is not installed is skipped.
"""

from __future__ import annotations

import sys

import pytest
from wheelhouse import ROOT

sys.path.insert(0, str(ROOT / "shared"))
from flambeau_coverage import NAMESPACES  # noqa: E402

PRESENT = ROOT / "shared" / "flambeau_coverage" / "present.txt"


def present_names() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for line in PRESENT.read_text().splitlines():
        if line and not line.startswith("#"):
            namespace, name = line.split()
            names.setdefault("" if namespace == "." else namespace, []).append(name)
    return names


@pytest.mark.parametrize("namespace", NAMESPACES, ids=lambda ns: ns.title)
def test_names_flambeau_has_keep_existing(namespace):
    expected = present_names().get(namespace.name, [])
    module = namespace.resolve("flambeau")
    if module is None:
        pytest.skip(f"flambeau.{namespace.name} is not installed")
    lost = [name for name in expected if not hasattr(module, name)]
    assert not lost, f"{namespace.title} lost {lost}"
