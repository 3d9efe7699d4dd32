#!/usr/bin/env bash
# Each package installed alone with its flambeau dependencies, in fresh environments.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s tests -- -k install_matrix
