#!/usr/bin/env bash
# The editable install of the core that CONTRIBUTING.md gives (a Debug build, in
# build/integration/): apart from tests.sh, which tests the wheels, so that the core
# is not compiled twice in one job.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s editable
