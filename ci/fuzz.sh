#!/usr/bin/env bash
# Fuzz every operator: a fixed seed and a fixed number of calls (about 3 minutes), so
# every CI run makes the same calls and a failure reproduces with the same command.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s fuzz -- --calls "${FUZZ_CALLS:-300000}"
