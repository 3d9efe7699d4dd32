#!/usr/bin/env bash
# Builds the wheels (the core compiles once), then runs the README's test command.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s build
# The README's test command, verbatim; the wheels are fresh, so `build` does not rebuild.
python3 -m pip install nox && python3 -m nox -s tests
