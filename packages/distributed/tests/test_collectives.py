import pytest
from conftest import expect_ok, run_workers


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_matches_numpy(n):
    expect_ok(run_workers("collectives.py", n), n)
