import os
import sys

import pytest

# The operator table package (tests/optable) is imported by test modules.
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """Runs a kernel test once single-threaded and once on two threads."""
    import flambeau

    old = flambeau.get_num_threads()
    flambeau.set_num_threads(request.param)
    yield request.param
    flambeau.set_num_threads(old)
