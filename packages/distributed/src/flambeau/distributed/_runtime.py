"""Loading MPI, configured for the machine it runs on.

`from mpi4py import MPI` initializes MPI, so nothing imports it before
init_process_group (importing flambeau.distributed must stay cheap and side-effect
free). Before that first import, when a node runs more ranks than it has cores, the
runtime is told to yield the processor while it waits: MPI's progress engine otherwise
busy-polls, and a rank spinning on a core that the peer it waits for needs makes small
collectives about 10x slower (measured: a 4-byte allreduce among 4 ranks on 2 cores
takes 1.8 ms busy-polling, 0.27 ms yielding).
"""

from __future__ import annotations

import os

# MPICH (ch4): sleep (nanosleep) instead of sched_yield, after every failed poll.
# Open MPI: its classic switch. Set only where the user has not set them.
MPICH_YIELD = {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "1", "MPIR_CVAR_POLLS_BEFORE_YIELD": "1"}
OPENMPI_YIELD = {"OMPI_MCA_mpi_yield_when_idle": "1"}

# How launchers tell a process how many ranks share its node.
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE")

_MPI = None


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def local_world_size() -> int | None:
    for var in _LOCAL_SIZE_VARS:
        value = os.environ.get(var)
        if value and value.isdigit():
            return int(value)
    return None


def oversubscribed() -> bool:
    """Whether this node runs more ranks than this process has cores (FLAMBEAU_MPI_YIELD=1
    or 0 forces the answer)."""
    forced = os.environ.get("FLAMBEAU_MPI_YIELD", "auto").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    local = local_world_size()
    return local is not None and local > cores()


def communication_thread() -> bool:
    """Whether operations posted with async_op=True get a communication thread of their
    own (FLAMBEAU_COMM_THREAD=1 or 0 forces the answer).

    The thread pays off only with a core to run on while the caller computes: with a
    core or less per rank, it and the computing thread take turns on one core and on the
    interpreter lock, and every turn costs more than the overlap saves (measured: a DDP
    backward of a 0.8M-parameter MLP, 2 ranks on 2 cores, 9.4 ms alone, 15.1 ms beside the
    polling thread, 10.5 ms with the all-reduce driven at the end instead). Without the
    thread, a posted operation advances whenever the process enters MPI (any later call,
    Work.is_completed, Work.wait)."""
    forced = os.environ.get("FLAMBEAU_COMM_THREAD", "auto").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    return cores() >= 2 * (local_world_size() or 1)


def configure_environment(environ=None) -> dict:
    """Add the yield settings to `environ` (os.environ by default) when oversubscribed;
    returns what was added. Read by MPI at initialization, so this runs before it."""
    environ = os.environ if environ is None else environ
    added = {}
    if oversubscribed():
        for key, value in {**MPICH_YIELD, **OPENMPI_YIELD}.items():
            if key not in environ:
                environ[key] = added[key] = value
    return added


def mpi():
    """mpi4py's MPI module, initializing MPI (with thread support) on first use."""
    global _MPI
    if _MPI is None:
        import mpi4py

        configure_environment()
        # The communication thread polls requests while the caller posts new ones.
        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


def threads_supported() -> bool:
    MPI = mpi()
    return MPI.Query_thread() >= MPI.THREAD_MULTIPLE


def is_available() -> bool:
    """Whether mpi4py (and so an MPI) can be imported, without initializing it."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None
