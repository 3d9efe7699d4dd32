"""Never a hang: a dead, failing or stuck rank makes the others raise, naming it."""

import re
import time

from conftest import run_workers


def test_rank_raising_makes_the_others_raise_naming_it():
    start = time.monotonic()
    result = run_workers("failures.py", 4, "raise", launcher=True)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert time.monotonic() - start < 10, out
    assert "ValueError: rank 1 gives up" in out
    # (Lines of different ranks may arrive glued together: match each message's start.)
    raised = re.findall(r"rank (\d) raised after [\d.]+s: \[rank \d\] all_reduce", out)
    assert sorted(raised) == ["0", "2", "3"], out
    assert out.count("cannot complete: rank 1 (pid") >= 3, out
    assert "raised ValueError: rank 1 gives up" in out


def test_killed_rank_ends_the_job_and_is_named():
    start = time.monotonic()
    result = run_workers("failures.py", 4, "kill", launcher=True)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert time.monotonic() - start < 10, out
    assert "completed without rank 1" not in out
    # The survivors either raise naming rank 1 or are ended by mpiexec; the launcher says
    # which rank went first.
    named = re.search(r"cannot complete: rank 1 .*died", out) or "rank 1 failed first" in out
    together = re.search(r"ranks ([\d, ]+) ended without finishing", out)
    assert named or (together and "1" in together.group(1).split(", ")), out


def test_stuck_rank_times_out():
    start = time.monotonic()
    result = run_workers("failures.py", 2, "timeout", launcher=True, timeout=20, grace=1)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert time.monotonic() - start < 10, out  # the launcher ends the stuck rank
    assert "rank 0 failed first, and the job was ended 1s later" in out, out
    assert re.search(
        r"rank 0 raised after [3-9]\.\ds: .*all_reduce .*timed out after 0:00:03", out
    ), out


def test_collective_mismatch_is_reported_in_detail_mode():
    result = run_workers("failures.py", 2, "mismatch", env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})
    out = result.stdout + result.stderr
    assert out.count("WORKER OK") == 2, out


def test_rank_failing_during_ddp_backward_is_named():
    # DDP's buckets in node shared memory wait at barriers that watch the peers too.
    start = time.monotonic()
    result = run_workers("failures.py", 2, "ddp", launcher=True)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert time.monotonic() - start < 10, out
    assert "backward completed without rank 1" not in out
    shared = r"rank 0 raised after [\d.]+s: \[rank 0\] shared-memory all_reduce"
    assert re.search(shared, out), out
    assert "cannot complete: rank 1 (pid" in out, out
