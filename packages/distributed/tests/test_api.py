"""What needs no MPI job: import, errors before init, names, environment handling."""

import os
import subprocess
import sys

import pytest

import flambeau
import flambeau.distributed as dist
from flambeau.distributed import _bootstrap, _runtime


def test_import_does_not_initialize_mpi():
    code = "import flambeau.distributed, sys; print('mpi4py.MPI' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_reachable_as_attribute_and_from_nn_parallel():
    assert flambeau.distributed is dist
    from flambeau.nn.parallel import DistributedDataParallel

    assert DistributedDataParallel is dist.DistributedDataParallel


def test_calls_before_init_raise_as_pytorch():
    assert dist.is_available() and not dist.is_initialized()
    msg = "Default process group has not been initialized"
    with pytest.raises(ValueError, match=msg):
        dist.get_rank()
    with pytest.raises(ValueError, match=msg):
        dist.all_reduce(flambeau.ones(2))
    with pytest.raises(TypeError):
        dist.all_reduce([1, 2])


def test_names_as_pytorch():
    assert dist.ReduceOp.SUM == dist.ReduceOp.RedOpType.SUM
    assert {"SUM", "AVG", "PRODUCT", "MIN", "MAX"} <= set(dist.ReduceOp.RedOpType.__members__)
    assert dist.Backend("MPI") == dist.Backend.MPI == "mpi"
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
    assert dist.default_pg_timeout.total_seconds() == 1800
    assert dist.GroupMember.WORLD is None and dist.group.WORLD is None


def test_environment_from_launchers():
    env = {"PMI_RANK": "5", "PMI_SIZE": "8", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "4"}
    got = _bootstrap.launch_environment(env)
    assert got["RANK"] == "5" and got["WORLD_SIZE"] == "8"
    assert got["LOCAL_RANK"] == "1" and got["LOCAL_WORLD_SIZE"] == "4" and got["GROUP_RANK"] == "1"
    ompi = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3"}
    assert _bootstrap.launch_environment(ompi)["RANK"] == "2"
    assert _bootstrap.launch_environment({}) == {}


def test_yield_settings_only_when_oversubscribed(monkeypatch):
    monkeypatch.delenv("FLAMBEAU_MPI_YIELD", raising=False)
    monkeypatch.setenv("MPI_LOCALNRANKS", str(_runtime.cores() * 2))
    env = {}
    assert _runtime.configure_environment(env) == env
    assert env["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "1"
    assert env["OMPI_MCA_mpi_yield_when_idle"] == "1"
    monkeypatch.setenv("MPI_LOCALNRANKS", "1")
    assert _runtime.configure_environment({}) == {}
    monkeypatch.setenv("FLAMBEAU_MPI_YIELD", "1")
    user = {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "0"}
    _runtime.configure_environment(user)
    assert user["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "0"  # the user's choice stands


def test_communication_thread_only_with_a_spare_core_per_rank(monkeypatch):
    monkeypatch.delenv("FLAMBEAU_COMM_THREAD", raising=False)
    monkeypatch.setenv("MPI_LOCALNRANKS", "1")
    assert _runtime.communication_thread() == (_runtime.cores() >= 2)
    monkeypatch.setenv("MPI_LOCALNRANKS", str(_runtime.cores()))
    assert not _runtime.communication_thread()  # a core a rank: no room for the thread
    monkeypatch.setenv("FLAMBEAU_COMM_THREAD", "1")
    assert _runtime.communication_thread()
    monkeypatch.setenv("FLAMBEAU_COMM_THREAD", "0")
    monkeypatch.setenv("MPI_LOCALNRANKS", "1")
    assert not _runtime.communication_thread()


@pytest.mark.parametrize(
    "call",
    [
        "init_method='tcp://127.0.0.1:29500', rank=0, world_size=2",
        "init_method='tcp://127.0.0.1:29500?world_size=2&rank=0'",
    ],
)
def test_tcp_rendezvous_of_separately_started_ranks_says_how_to_launch(call):
    code = f"import flambeau.distributed as d; d.init_process_group('gloo', {call})"
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode != 0
    assert "ValueError" in out.stderr and "mpiexec -n 2" in out.stderr, out.stderr
