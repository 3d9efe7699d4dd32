"""flambeau.distributed beside torch.distributed (gloo), 2 ranks on this machine.

Rows: all_reduce of 4 bytes and of 25 MB (one DDP bucket), and a DDP training step of a
~1M-parameter MLP (per-rank batch 256) beside the single-process step on the same
batch; the ratio column of that row is the overhead (single / DDP). Each job is started
here and times itself; the median of its timed repeats is reported. Every process runs
one thread (OMP_NUM_THREADS=1), as torchrun sets it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from flambeau_bench import Timing, attempt, measure, report

HERE = Path(__file__).resolve()
BIN = Path(sys.executable).parent
SIZES = {"4 B": 1, "25 MB": 25 << 18}
STEP_LAUNCHES = 5  # alternating launches of DDP, single and 2 local processes


def _time(fn, repeat):
    """(median, best) seconds: every rank makes the same calls, collectives included."""
    t = measure(fn, repeat=repeat)
    return t.median, t.best


def mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 10)
    )


def step_fn(lib, model, x, y):
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def worker(role: str) -> None:
    """Runs inside each rank (or the single process) and prints its timings as JSON."""
    if role.startswith("torch"):
        import torch
        import torch.distributed as dist

        lib = torch
        dist.init_process_group("gloo")
    else:
        import flambeau as lib
        import flambeau.distributed as dist

        if role != "single":
            dist.init_process_group("mpi")
    rank = dist.get_rank() if role != "single" else 0
    out = {}
    if role in ("flambeau", "torch"):
        for name, numel in SIZES.items():
            t = lib.ones(numel)
            dist.barrier()
            out[name] = _time(lambda t=t: dist.all_reduce(t), 200 if numel == 1 else 15)
    if role in ("flambeau", "single", "local"):
        model = mlp(lib)
        g = lib.Generator().manual_seed(rank)
        x, y = lib.randn(256, 256, generator=g), lib.randint(0, 10, (256,), generator=g)
        if role == "flambeau":
            from flambeau.nn.parallel import DistributedDataParallel

            ddp = DistributedDataParallel(model)
            out["step"] = _time(step_fn(lib, ddp, x, y), 60)
            info = ddp._get_ddp_logging_data()
            out["overlap_s"] = info["first_launch_before_backward_end_s"]
            out["backward_s"] = info["backward_time_s"]
        else:
            out["step"] = _time(step_fn(lib, model, x, y), 60)
        out["params"] = sum(p.numel() for p in model.parameters())
    if rank == 0:
        print("BENCH " + json.dumps(out), flush=True)
    if role != "single":
        dist.destroy_process_group()


def _launch(role: str, n: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "BENCH_ROLE": role}
    if role == "torch":
        with socket.socket() as s:  # a free port for gloo's rendezvous
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = [
            subprocess.Popen(
                [sys.executable, str(HERE)],
                env={
                    **env,
                    "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(port),
                    "RANK": str(r),
                    "WORLD_SIZE": str(n),
                },
                stdout=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for r in range(n)
        ]
        outs = [p.communicate(timeout=300)[0] for p in procs]
        text = outs[0]
    elif n == 1:
        text = subprocess.run([sys.executable, str(HERE)], env=env, capture_output=True,
                              text=True, timeout=300).stdout  # fmt: skip
    else:
        cmd = [str(BIN / "mpiexec"), "-n", str(n), sys.executable, str(HERE)]
        text = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300).stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("BENCH "))
    return json.loads(line[6:])


def _timing(pair) -> Timing:
    median, best = pair
    return Timing(best=best, median=median)


def main() -> None:
    ours = attempt(lambda: _launch("flambeau", 2), "flambeau 2 ranks") or {}
    try:
        import torch.distributed  # noqa: F401

        theirs = attempt(lambda: _launch("torch", 2), "torch gloo 2 ranks") or {}
    except ImportError:
        theirs = {}
    single = attempt(lambda: _launch("single", 1), "single process") or {}
    # Two processes stepping at once without communicating: what sharing the machine's
    # cores (with whatever else runs on it) costs, apart from DDP.
    local = attempt(lambda: _launch("local", 2), "2 processes, no communication") or {}
    # One launch's median step moves by ~0.5 ms from launch to launch on a shared machine
    # (3% of the step): the step rows take the median over alternating launches.
    for _ in range(STEP_LAUNCHES - 1):
        for role, n, runs in (("flambeau", 2, ours), ("single", 1, single), ("local", 2, local)):
            if "step" in runs and (more := attempt(lambda r=role, k=n: _launch(r, k), role)):
                runs.setdefault("steps", [runs["step"]]).append(more["step"])
    for runs in (ours, single, local):
        if steps := runs.pop("steps", None):
            runs["step"] = sorted(steps)[len(steps) // 2]  # (median, best) pairs, by median
    rows = []
    for name in SIZES:
        rows.append((
            f"all_reduce {name}, 2 ranks (torch: gloo)",
            _timing(ours[name]) if name in ours else None,
            None,
            _timing(theirs[name]) if name in theirs else None,
        ))  # fmt: skip
    report("distributed collectives (median; torch column: gloo)", rows, statistic="median")
    if "step" in ours and "step" in single:
        ddp, one = ours["step"][0], single["step"][0]
        report(
            "DDP step, ~1M-parameter MLP, batch 256 a rank (torch column: one flambeau process)",
            [(f"DDP step, 2 ranks ({ours['params']:,} params)", ddp, None, one)]
            + (
                [("2 processes stepping alone, no DDP", local["step"][0], None, one)]
                if local
                else []
            ),
            statistic="median",  # the values are medians
        )
        if local:
            print(
                f"DDP overhead over 2 processes stepping without communication: "
                f"{(ddp / local['step'][0] - 1) * 100:+.1f}%",
                flush=True,
            )
        print(
            f"DDP overhead over the single-process step: {(ddp / one - 1) * 100:+.1f}%; "
            f"first bucket posted {ours['overlap_s'] * 1e3:.2f} ms before backward ended "
            f"(backward {ours['backward_s'] * 1e3:.2f} ms)",
            flush=True,
        )


if __name__ == "__main__":
    role = os.environ.get("BENCH_ROLE")
    if role:
        worker(role)
    else:
        main()
