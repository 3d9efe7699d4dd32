"""The parent: hands out calls to worker processes and survives their deaths.

The parent never imports flambeau, so a crash cannot take it down. Each worker
gets a batch of consecutive call indices and reports each call's outcome as it
finishes. A worker that dies, or that makes no progress for `timeout` seconds, was
in the middle of the first call of its batch not yet reported: that call is the
crash or the hang. The worker is replaced, a fresh one regenerates the call's
source for the reproducer (generation is deterministic), and the rest of the batch
goes on.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import sanitizer
from .report import Results

BATCH = 16
LOG_TAIL = 4000


@dataclass
class Settings:
    seed: int = 0
    budget: float | None = None  # seconds
    calls: int | None = None
    workers: int = 2
    timeout: float = 30.0
    memory_bytes: int = 4 << 30
    ops: str | None = None  # a regular expression over operator names
    report_dir: Path = Path("fuzz-report")
    sanitized: str = ""  # the sanitizer runtime to preload; "" when not sanitized
    threads: int = 1
    oracle: bool = False  # also run each call against PyTorch (oracle.py)
    oracle_path: str | None = None  # a site-packages holding torch, appended to sys.path


@dataclass
class Worker:
    slot: int
    proc: subprocess.Popen
    events: int  # read end of the event pipe
    log: Path
    buffer: bytes = b""
    ready: bool = False
    next: int = 0  # the call in progress (or next) in the current batch
    stop: int = 0  # end of the current batch
    since: float = field(default_factory=time.monotonic)  # last sign of progress
    log_offset: int = 0  # the log's size when the call in progress began
    in_oracle: bool = False  # running the last call against PyTorch: its crashes are not ours

    @property
    def busy(self) -> bool:
        return self.next < self.stop or self.in_oracle

    def send(self, command: dict) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(command) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:  # it died; the loop notices
            pass


class Runner:
    def __init__(self, settings: Settings, results: Results) -> None:
        self.s = settings
        self.results = results
        self.selector = selectors.DefaultSelector()
        self.workers: list[Worker] = []
        self.next_index = 0
        self.spawned = 0
        self.log_dir = settings.report_dir / "logs"
        self.sanitizer_dir = settings.report_dir / "sanitizer"
        self.pending_describe: dict[int, int] = {}  # call index -> slot asked to describe it

    # -- workers ---------------------------------------------------------------------------
    def _config(self, slot: int) -> dict:
        config = {"seed": self.s.seed, "ops": self.s.ops}
        config.update(oracle=self.s.oracle, oracle_path=self.s.oracle_path)
        if self.s.sanitized:
            config["sanitizer_logs"] = [
                str(self.sanitizer_dir / f"{kind}-{slot}") for kind in ("asan", "ubsan")
            ]
        else:
            config["memory_bytes"] = self.s.memory_bytes
        return config

    def _env(self, slot: int) -> dict:
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(self.s.threads)
        env["PYTHONFAULTHANDLER"] = "1"
        if self.s.sanitized:
            env = sanitizer.worker_env(env, self.s.sanitized, self.sanitizer_dir, slot)
        return env

    def spawn(self, slot: int) -> Worker:
        self.spawned += 1
        read_end, write_end = os.pipe()
        log = self.log_dir / f"worker-{slot}-{self.spawned}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "flambeau_fuzz.worker", json.dumps(self._config(slot)),
                 str(write_end)],
                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                pass_fds=(write_end,), env=self._env(slot),
            )  # fmt: skip
        os.close(write_end)
        os.set_blocking(read_end, False)
        worker = Worker(slot, proc, read_end, log)
        self.selector.register(read_end, selectors.EVENT_READ, worker)
        return worker

    def retire(self, worker: Worker, kill: bool) -> None:
        self.selector.unregister(worker.events)
        if kill and worker.proc.poll() is None:
            worker.proc.kill()
        try:
            if worker.proc.stdin:
                worker.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            worker.proc.wait(timeout=5 if not kill else 30)
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            worker.proc.wait()
        os.close(worker.events)

    def replace(self, worker: Worker) -> Worker:
        """A fresh worker in the same slot that carries on with the rest of the batch."""
        fresh = self.spawn(worker.slot)
        self.workers[worker.slot] = fresh
        for index, slot in self.pending_describe.items():  # lost with the old worker
            if slot == worker.slot:
                fresh.send({"describe": index})
        if worker.next + 1 < worker.stop:
            self.assign(fresh, worker.next + 1, worker.stop)
        return fresh

    def assign(self, worker: Worker, start: int, stop: int) -> None:
        worker.next, worker.stop, worker.since = start, stop, time.monotonic()
        worker.send({"run": [start, stop]})

    # -- events ------------------------------------------------------------------------------
    def handle(self, worker: Worker, event: dict) -> None:
        if "ready" in event:
            worker.ready = True
            self.results.ops_fuzzed = event["ready"]
        elif "done" in event:
            self.results.add(event)
            worker.next = event["done"] + 1
            worker.log_offset = worker.log.stat().st_size
            worker.since = time.monotonic()
        elif "oracle_start" in event:
            worker.in_oracle = True
        elif "oracle" in event:
            worker.in_oracle = False
            worker.since = time.monotonic()
            self.results.add_oracle(event)
        elif "batch" in event:
            worker.next = worker.stop
        elif "described" in event:
            self.results.attach(event["described"], event)
            self.pending_describe.pop(event["described"], None)

    def read(self, worker: Worker) -> None:
        try:
            chunk = os.read(worker.events, 1 << 16)
        except BlockingIOError:
            return
        worker.buffer += chunk
        *lines, worker.buffer = worker.buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self.handle(worker, json.loads(line))

    def fail(self, worker: Worker, outcome: str) -> None:
        """Record the in-flight call of a dead or stuck worker, and replace the worker."""
        index = worker.next
        self.retire(worker, kill=outcome == "hang")
        self.read_leftovers(worker)
        index = worker.next  # the leftovers may have reported more calls done
        if worker.in_oracle:  # PyTorch crashed or hung on the call: not a finding of ours
            self.results.oracle_failures += 1
            worker.next -= 1  # replace() resumes after the call in progress
            self.replace(worker)
            return
        if not worker.busy:  # it died between batches: nothing to charge
            self.replace(worker)
            return
        rc = worker.proc.returncode
        if outcome == "hang":
            exc = f"timeout {self.s.timeout:g}s"
        elif rc is not None and rc < 0:
            exc = signal.Signals(-rc).name
        else:
            exc = f"exit {rc}"
        # What the worker printed during this call alone: a traceback, a sanitizer report.
        with open(worker.log, "rb") as log:
            log.seek(worker.log_offset)
            output = log.read().decode(errors="replace")
        report = ""
        if self.s.sanitized and outcome == "crash":
            logs = sanitizer.read_reports(self.sanitizer_dir, worker.slot, worker.proc.pid)
            report = sanitizer.reports_in(logs + "\n" + output)
            exc = sanitizer.kind(report) or exc
            if exc == sanitizer.OOM_IN_NEW:
                # An uninstrumented build raises MemoryError here (clean, see outcomes);
                # ASan's operator new aborts instead. Not a memory error: count it clean.
                self.results.outcomes["clean"] += 1
                self.replace(worker)
                return
        detail = report or output[-LOG_TAIL:]
        self.results.add_failure(index, outcome, exc, sanitizer.where(report), detail)
        fresh = self.replace(worker)
        fresh.send({"describe": index})
        self.pending_describe[index] = fresh.slot

    def read_leftovers(self, worker: Worker) -> None:
        """Events a dead worker wrote before it died."""
        try:
            while chunk := os.read(worker.events, 1 << 16):
                worker.buffer += chunk
        except (BlockingIOError, OSError):
            pass
        *lines, worker.buffer = worker.buffer.split(b"\n")
        for line in lines:
            if line.strip():
                self.handle(worker, json.loads(line))

    # -- the loop ----------------------------------------------------------------------------
    def more_work(self, deadline: float | None) -> bool:
        if deadline is not None and time.monotonic() >= deadline:
            return False
        return self.s.calls is None or self.next_index < self.s.calls

    def run(self) -> None:
        for folder in (self.log_dir, self.sanitizer_dir):  # ours: old logs would mislead
            if folder.exists():
                shutil.rmtree(folder)
        self.log_dir.mkdir(parents=True)
        if self.s.sanitized:
            self.sanitizer_dir.mkdir(parents=True)
        started = time.monotonic()
        deadline = started + self.s.budget if self.s.budget is not None else None
        self.workers = [self.spawn(slot) for slot in range(self.s.workers)]
        try:
            self.loop(deadline)
        except KeyboardInterrupt:  # keep what was found so far; the workers got the ^C too
            for worker in self.workers:
                worker.proc.kill()
            self.results.interrupted = True
        self.results.elapsed = time.monotonic() - started
        self.shutdown()

    def loop(self, deadline: float | None) -> None:
        startup_deaths = 0
        while True:
            working = self.more_work(deadline)
            for worker in list(self.workers):
                if worker.ready and not worker.busy and working:
                    stop = self.next_index + BATCH
                    if self.s.calls is not None:
                        stop = min(stop, self.s.calls)
                    self.assign(worker, self.next_index, stop)
                    self.next_index = stop
            if not working and not any(w.busy for w in self.workers) and not self.pending_describe:
                break
            for key, _ in self.selector.select(timeout=0.2):
                self.read(key.data)
            now = time.monotonic()
            for worker in list(self.workers):
                self.read(worker)
                if worker.proc.poll() is not None:
                    if not worker.ready:
                        startup_deaths += 1
                        if startup_deaths > 3:
                            self.shutdown()
                            log = worker.log.read_text(errors="replace")[-LOG_TAIL:]
                            raise SystemExit(f"flambeau_fuzz: workers die on start:\n{log}")
                    self.fail(worker, "crash")
                elif worker.busy and now - worker.since > self.s.timeout:
                    self.fail(worker, "hang")
                elif not worker.busy and not worker.ready and now - worker.since > 120:
                    self.fail(worker, "hang")  # stuck importing: shows in the log

    def shutdown(self) -> None:
        for worker in self.workers:
            self.retire(worker, kill=False)
            if worker.log.exists() and worker.log.stat().st_size == 0:
                worker.log.unlink()
