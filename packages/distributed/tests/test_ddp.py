import pytest
from conftest import expect_ok, run_workers


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_matches_single_process_training(n):
    expect_ok(run_workers("ddp.py", n, timeout=40), n)
