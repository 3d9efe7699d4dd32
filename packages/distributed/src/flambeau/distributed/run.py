"""``python -m flambeau.distributed.run``: start a distributed job, as torchrun does.

    python -m flambeau.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m flambeau.distributed.run --nnodes 2 --nproc-per-node 8 \\
        --hostfile hosts train.py

It runs the MPI launcher that comes with the MPI runtime (Hydra's mpiexec from the mpich
wheel; Open MPI's mpirun also works) with one process per rank, each of which gets
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR, MASTER_PORT) before the script runs. Several machines are reached the way
MPI reaches them: ssh to the hosts of --hosts/--hostfile (passwordless, the same Python
environment at the same path), or the allocation of a scheduler (Slurm, PBS) when run
inside one.

When a rank dies of a Python exception it first tells the others, which raise
DistBackendError naming it. When one is killed (SIGKILL, out of memory), Hydra ends the
others at once, and this launcher, which watches the ranks' processes on its machine,
says which rank went first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from ._runtime import cores


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m flambeau.distributed.run",
        description="Start a flambeau.distributed job on MPI (torchrun's counterpart).",
    )
    p.add_argument(
        "--nproc-per-node", "--nproc_per_node", default="1",
        help="processes per node: a number, or 'cpu'/'auto' for one per core (default 1)",
    )  # fmt: skip
    p.add_argument("--nnodes", default="1", help="number of nodes (default 1)")
    p.add_argument("--hosts", help="comma-separated host names (passed to mpiexec -hosts)")
    p.add_argument("--hostfile", help="a file of host names, one a line (mpiexec -f)")
    p.add_argument("--master-addr", "--master_addr", default=None, help="MASTER_ADDR for the ranks")
    p.add_argument(
        "--master-port", "--master_port", default="29500", help="MASTER_PORT for the ranks"
    )
    p.add_argument(
        "--node-rank",
        "--node_rank",
        default=None,
        help="accepted for torchrun scripts; MPI places ranks itself",
    )
    p.add_argument(
        "--mpiexec",
        default=None,
        help="the MPI launcher to run (default: the one beside this Python, then PATH)",
    )
    p.add_argument(
        "--mpiexec-args", default="", help="extra arguments for the MPI launcher, as one string"
    )
    p.add_argument(
        "-m", "--module", action="store_true", help="run the script as a module (python -m)"
    )
    p.add_argument(
        "--no-python",
        "--no_python",
        action="store_true",
        help="run the script as an executable, not with Python",
    )
    p.add_argument(
        "--failure-grace",
        type=float,
        default=10.0,
        help="seconds the other ranks get to finish after one fails, before the job is ended "
        "(default 10)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    p.add_argument("script", help="the training script (or module, or executable)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p  # fmt: skip


def find_mpiexec(explicit: str | None = None) -> str:
    if explicit:
        return explicit
    if env := os.environ.get("FLAMBEAU_MPIEXEC"):
        return env
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        raise SystemExit(
            "flambeau.distributed.run: no mpiexec found; install an MPI runtime "
            "(pip install mpich) or name one with --mpiexec"
        )
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr


def build_command(args) -> tuple[list[str], dict[str, str]]:
    """The MPI launcher's command line and the environment it passes to every rank."""
    per_node = (
        cores() if args.nproc_per_node in ("cpu", "auto", "gpu") else int(args.nproc_per_node)
    )
    nnodes = int(str(args.nnodes).split(":")[-1])
    total = per_node * nnodes
    mpiexec = find_mpiexec(args.mpiexec)
    open_mpi = _is_open_mpi(mpiexec)
    env = {
        "MASTER_ADDR": args.master_addr or socket.gethostname(),
        "MASTER_PORT": str(args.master_port),
        "TORCHELASTIC_RUN_ID": os.environ.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex[:12]),
        "LOCAL_WORLD_SIZE": str(per_node),
    }
    if "OMP_NUM_THREADS" not in os.environ and per_node > 1:
        # As torchrun: one thread each unless told otherwise, so ranks do not oversubscribe.
        env["OMP_NUM_THREADS"] = "1"
    cmd = [mpiexec]
    if open_mpi:
        cmd += ["-n", str(total), "--map-by", f"ppr:{per_node}:node"]
        if per_node > cores():
            cmd.append("--oversubscribe")
        if args.hosts:
            cmd += ["--host", ",".join(f"{h}:{per_node}" for h in args.hosts.split(","))]
        if args.hostfile:
            cmd += ["--hostfile", args.hostfile]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
    else:
        if nnodes == 1 and not args.hosts and not args.hostfile:
            # A rank that dies of an exception first tells the others (liveness.py); this
            # lets them raise, naming it, instead of being killed before they can.
            cmd.append("-disable-auto-cleanup")
        cmd += ["-n", str(total), "-ppn", str(per_node)]
        if args.hosts:
            cmd += ["-hosts", args.hosts]
        if args.hostfile:
            cmd += ["-f", args.hostfile]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    cmd += args.mpiexec_args.split()
    if args.no_python:
        cmd += [args.script, *args.script_args]
    else:
        cmd += [sys.executable, "-u", "-m", "flambeau.distributed._bootstrap"]
        cmd += ["--module", args.script] if args.module else [args.script]
        cmd += args.script_args
    return cmd, env


def _forward(src, dst) -> None:
    for line in iter(src.readline, b""):
        dst.buffer.write(line)
        dst.flush()


def _rank_table(run_dir: str) -> dict[int, tuple[int, str]]:
    """pid -> (rank, host), from the files each rank writes at init_process_group."""
    table = {}
    for name in os.listdir(run_dir):
        if name.startswith("rank-") and "." not in name:
            try:
                with open(os.path.join(run_dir, name)) as f:
                    rank, pid, host = f.read().split()
                table[int(pid)] = (int(rank), host)
            except (OSError, ValueError):
                pass
    return table


class _Watcher(threading.Thread):
    """Watches the ranks on this host: notes which failed first (a rank that vanished
    without saying it finished, or said it failed) and ends the job `grace` seconds
    later if the others have not finished by then (one may be stuck waiting in vain)."""

    def __init__(self, run_dir: str, proc, grace: float):
        super().__init__(daemon=True)
        self.run_dir, self.proc, self.grace = run_dir, proc, grace
        self.first_gone: list[int] = []
        self.ended_by_us = False

    def _failed(self, host: str) -> list[int]:
        from .liveness import pid_alive

        failed = []
        for pid, (rank, h) in _rank_table(self.run_dir).items():
            base = os.path.join(self.run_dir, f"rank-{rank}")
            if os.path.exists(base + ".failed"):
                failed.append(rank)
            elif h == host and not pid_alive(pid) and not os.path.exists(base + ".done"):
                failed.append(rank)
        return sorted(failed)

    def run(self) -> None:
        host = socket.gethostname()
        while self.proc.poll() is None:
            failed = self._failed(host)
            if failed:
                self.first_gone = failed
                break
            time.sleep(0.02)
        else:
            return
        deadline = time.monotonic() + self.grace
        while self.proc.poll() is None:
            if time.monotonic() >= deadline:
                self.ended_by_us = True
                self.proc.terminate()  # Hydra passes it on to every rank
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                return
            time.sleep(0.05)


def _explain(code: int, watcher: _Watcher) -> str | None:
    if not watcher.first_gone:
        return None
    ranks = ", ".join(map(str, watcher.first_gone))
    ended = f", and the job was ended {watcher.grace:g}s later" if watcher.ended_by_us else ""
    # Several at once: Hydra ended the others within the same poll; the culprit is among them.
    who = (
        f"rank {ranks} failed first"
        if len(watcher.first_gone) == 1
        else (f"ranks {ranks} ended without finishing")
    )
    return f"flambeau.distributed.run: {who}{ended}; the job's exit status is {code}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cmd, env = build_command(args)
    if "OMP_NUM_THREADS" in env:
        print(
            "flambeau.distributed.run: setting OMP_NUM_THREADS=1 for each process (set it to "
            "use more threads per process)",
            file=sys.stderr,
        )
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    with tempfile.TemporaryDirectory(prefix="flambeau-run-") as run_dir:
        env["FLAMBEAU_RUN_DIR"] = run_dir
        proc = subprocess.Popen(
            cmd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        pumps = [
            threading.Thread(target=_forward, args=(proc.stdout, sys.stdout)),
            threading.Thread(target=_forward, args=(proc.stderr, sys.stderr)),
        ]
        watcher = _Watcher(run_dir, proc, args.failure_grace)
        for t in [*pumps, watcher]:
            t.start()
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            code = proc.wait()
        for t in pumps:
            t.join()
        if watcher.ended_by_us and code == 0:
            code = 1
        if code != 0 and (why := _explain(code, watcher)):
            print(why, file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
