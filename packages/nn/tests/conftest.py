import sys
from pathlib import Path

# The tests share small helpers in _helpers.py beside them.
sys.path.insert(0, str(Path(__file__).parent))
