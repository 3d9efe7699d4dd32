"""A pytest plugin for third-party suites that draw random inputs without seeding: each
test starts from seed 0 (flambeau's generator, NumPy's global one and ``random``), so
a run is reproducible and a tolerance missed on an unlucky draw (zuko's inverse checks
miss theirs on about 1 draw in 13 under PyTorch too) fails every time or never.

    pytest -p flambeau_testing.seed_each_test ...
"""

from __future__ import annotations

import random

import pytest


@pytest.fixture(autouse=True)
def _seed_each_test():
    import numpy as np

    import flambeau

    flambeau.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
