import sys
from pathlib import Path

# The tests share small helpers in _helpers.py beside them, and the repository's in
# shared/flambeau_testing.
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[3] / "shared"))
