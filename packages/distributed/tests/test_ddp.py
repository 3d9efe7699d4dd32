import pytest
from conftest import expect_ok, run_workers

# Buckets in node shared memory (all ranks on this node), or reduced by MPI's messages
# (the path of ranks on several nodes).
MPI_PATH = {"FLAMBEAU_DDP_SHARED_MEMORY": "0"}


@pytest.mark.parametrize(
    "n, env", [(2, None), (4, None), (2, MPI_PATH)], ids=["node-memory-2", "node-memory-4", "mpi-2"]
)
def test_ddp_matches_single_process_training(n, env):
    expect_ok(run_workers("ddp.py", n, timeout=40, env=env), n)


def test_ddp_with_the_communication_thread():
    # This machine has too few cores for the thread to be chosen; force it.
    expect_ok(run_workers("ddp.py", 2, timeout=40, env={"FLAMBEAU_COMM_THREAD": "1"}), 2)


def test_comm_hooks_and_bucket_rebuild():
    expect_ok(run_workers("ddp_hooks.py", 2, timeout=40), 2)


@pytest.mark.parametrize("env", [None, MPI_PATH], ids=["node-memory", "mpi"])
def test_join_with_uneven_inputs(env):
    expect_ok(run_workers("ddp_join.py", 2, timeout=40, env=env), 2)


@pytest.mark.parametrize("n", [2, 3])
def test_large_gradients_reduced_in_place(n):
    # Unused and non-contiguous large gradients, no_sync, join() on uneven inputs; over
    # MPI's messages, as between nodes (buckets in node memory are reduced where they are).
    expect_ok(run_workers("ddp_zero_copy.py", n, timeout=40, env=MPI_PATH), n)
