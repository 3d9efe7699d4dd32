import pytest
from conftest import expect_ok, run_workers


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_matches_numpy(n):
    expect_ok(run_workers("collectives.py", n), n)


def test_collectives_with_the_communication_thread():
    # This machine has too few cores for the thread to be chosen; force it.
    expect_ok(run_workers("collectives.py", 2, env={"FLAMBEAU_COMM_THREAD": "1"}), 2)
