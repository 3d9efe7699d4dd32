"""Tests that need a CUDA device: skipped, with the reason, unless
``flambeau.cuda.is_available()`` (the plugin installed, a driver, a GPU).
``run_on_device.sh`` installs the plugin and runs them in one command."""

from __future__ import annotations

import pytest

flambeau = pytest.importorskip("flambeau")


def _why_not() -> str | None:
    try:
        if flambeau.cuda.is_available():
            return None
        import flambeau_cuda

        return f"no CUDA device: {flambeau_cuda._unavailable_reason()}"
    except Exception as e:  # the plugin is not installed, or failed to load
        return f"the CUDA plugin is not usable here: {type(e).__name__}: {e}"


_REASON = _why_not()


def pytest_collection_modifyitems(config, items):
    if _REASON is None:
        return
    skip = pytest.mark.skip(reason=_REASON)
    for item in items:
        if "/gpu/" in str(item.fspath):
            item.add_marker(skip)
