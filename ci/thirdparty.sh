#!/usr/bin/env bash
# Libraries written against PyTorch (einops, linear_operator, GPyTorch, skorch, TensorLy) run their own test
# suites on the wheels `ci/tests.sh` built (about 4 minutes): tests-thirdparty/.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s thirdparty
