import subprocess
import sys

import pytest
from conftest import expect_ok, run_workers


def test_launcher_sets_torchrun_environment_and_sampler_partitions():
    expect_ok(run_workers("sampler_env.py", 4, launcher=True), 4)


def test_plain_mpiexec_works_too():
    expect_ok(run_workers("sampler_env.py", 2), 2)


def test_launcher_command_line():
    out = subprocess.run(
        [sys.executable, "-m", "flambeau.distributed.run", "--dry-run", "--nnodes", "2",
         "--nproc-per-node", "3", "--hostfile", "hosts", "train.py", "--lr", "0.1"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cmd = out.stdout.split()
    assert cmd[cmd.index("-n") + 1] == "6" and cmd[cmd.index("-ppn") + 1] == "3"
    assert cmd[cmd.index("-f") + 1] == "hosts"
    assert cmd[-3:] == ["train.py", "--lr", "0.1"]
    assert "-disable-auto-cleanup" not in cmd  # several machines: Hydra's cleanup stays


@pytest.mark.parametrize("n", [4])
def test_data_package_sampler_is_present(n):
    pytest.importorskip("flambeau.utils.data")
