#!/usr/bin/env bash
# The documentation with every warning an error, then its examples as doctests.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s docs
