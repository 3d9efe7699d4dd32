#!/usr/bin/env bash
# ruff (Python) and clang-format (C++) checks; changes nothing.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s lint
