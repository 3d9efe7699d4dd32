#!/usr/bin/env bash
# Wheel sizes and import times against their budgets (BUDGET_* to override).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
python3 -m nox -s build
python3 ci/budgets.py
