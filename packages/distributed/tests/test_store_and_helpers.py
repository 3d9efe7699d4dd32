"""init_process_group(store=...), a registered rendezvous handler, and the helpers
over the collectives (object p2p, subgroups, coalesced and single-tensor collectives,
a TCPStore among MPI ranks), under mpiexec."""

import pytest
from conftest import expect_ok, run_workers


@pytest.mark.parametrize("n", [2, 4])
def test_init_with_a_store_and_the_helpers(n, tmp_path):
    expect_ok(run_workers("store_and_helpers.py", n, "store", str(tmp_path), timeout=90), n)


def test_init_through_a_registered_rendezvous_handler(tmp_path):
    expect_ok(run_workers("store_and_helpers.py", 2, "rendezvous", str(tmp_path), timeout=90), 2)
