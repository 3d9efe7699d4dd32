import sys
from pathlib import Path

import pytest

# The repository's shared test helpers (shared/flambeau_testing: the operator table) are
# imported by test modules; every suite that uses them puts shared/ on the path here.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "shared"))


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """Runs a kernel test once single-threaded and once on two threads."""
    import flambeau

    old = flambeau.get_num_threads()
    flambeau.set_num_threads(request.param)
    yield request.param
    flambeau.set_num_threads(old)
