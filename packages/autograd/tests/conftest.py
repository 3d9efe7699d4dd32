import sys
from pathlib import Path

# The repository's shared test helpers (shared/flambeau_testing: the operator table) are
# imported by test modules; every suite that uses them puts shared/ on the path here.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "shared"))
