"""The core keeps working when other native libraries load first."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("first", ["scipy.linalg", "flambeau"])
def test_error_messages_keep_their_numbers(first):
    # scipy.linalg loads the system libstdc++; the core's own (static) copy must
    # still format numbers (two copies mixed leave the stream without num_put).
    pytest.importorskip("scipy.linalg")
    code = f"""
import {first}, scipy.linalg, flambeau
try:
    flambeau.zeros(2, 3)[5]
except IndexError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    message = out.stdout.strip()
    assert "index 5 " in message and "size 2" in message, message
