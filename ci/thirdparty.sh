#!/usr/bin/env bash
# Libraries written against PyTorch (einops, linear_operator, GPyTorch, skorch) run their own test
# suites on the wheels `ci/tests.sh` built (about 2 minutes): tests-thirdparty/.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s thirdparty
