# Sourced by the ci/*.sh scripts: the repository root as working directory, nox ready.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 -m nox --version >/dev/null 2>&1 || python3 -m pip install nox
