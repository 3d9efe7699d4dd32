"""What each process started by flambeau.distributed.run runs first: the torchrun-style
environment (RANK, LOCAL_RANK, WORLD_SIZE, ...) from what the MPI launcher told it,
then the user's script or module, as `python script.py` would run it."""

from __future__ import annotations

import os
import runpy
import sys

# (rank, size, local rank, local size) as Hydra (MPICH, Intel MPI), Open MPI and Slurm
# name them.
_LAUNCHERS = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)


def launch_environment(environ=os.environ) -> dict[str, str]:
    """torchrun's variables for this process, from its MPI launcher's ({} if none)."""
    for rank, size, local_rank, local_size in _LAUNCHERS:
        if rank in environ and size in environ:
            r, n = int(environ[rank]), int(environ[size])
            lr = int(environ.get(local_rank, r))
            ln = int(str(environ.get(local_size, n)).split("(")[0].split(",")[0])
            return {
                "RANK": str(r),
                "WORLD_SIZE": str(n),
                "LOCAL_RANK": str(lr),
                "LOCAL_WORLD_SIZE": str(ln),
                "GROUP_RANK": str(r // ln if ln else 0),
                "ROLE_RANK": str(r),
                "ROLE_WORLD_SIZE": str(n),
            }
    return {}


def main(argv: list[str]) -> None:
    os.environ.update(launch_environment())
    if argv and argv[0] == "--module":
        module, args = argv[1], argv[2:]
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, args = argv[0], argv[1:]
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
