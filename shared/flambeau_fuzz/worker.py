"""A worker process: makes the calls the parent assigns, one at a time, in order.

Started by runner.py as `python -m flambeau_fuzz.worker CONFIG EVENTS_FD`. Commands
arrive on stdin as JSON lines; events leave on EVENTS_FD; stdout and stderr (where
a segfault's traceback or a sanitizer report lands) go to a log file. Calls run in
index order, so when the worker dies the parent knows which call killed it.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import stat
import sys
import time
import warnings

from . import sanitizer
from .generate import CONSUME, PREAMBLE, Case, generate
from .outcomes import classify, describe
from .table import select_ops

SLOW_CALL = 1.0  # seconds: reported, so that slow arguments can be spotted before they hang


class Worker:
    def __init__(self, config: dict, events) -> None:
        import flambeau  # after the memory limit: the import maps OpenBLAS's buffers

        self.flambeau = flambeau
        self.threads = flambeau.get_num_threads()
        self.seed = config["seed"]
        self.events = events
        self.logs = [f"{p}.{os.getpid()}" for p in config.get("sanitizer_logs", [])]
        if self.logs and stat.S_ISREG(os.fstat(2).st_mode):
            self.logs.append("/proc/self/fd/2")  # UBSan reports to stderr whatever log_path says
        self.log_sizes = [self._size(path) for path in self.logs]
        self.ops = select_ops(flambeau.ops_table(), config.get("ops"))
        # The reproducer's own definition of consume(), so the two cannot drift apart.
        self.globals: dict = {}
        exec(PREAMBLE + CONSUME.rsplit("\n", 1)[0], self.globals)
        self.last: tuple = ("skipped", None)  # (outcome, result or exception) of the last call
        self.torch = None
        if config.get("oracle"):
            from . import oracle

            self.torch = oracle.TorchAsFlambeau(oracle.load_torch(config.get("oracle_path")))

    def emit(self, event: dict) -> None:
        self.events.write(json.dumps(event) + "\n")

    def case(self, index: int) -> Case:
        return generate(self.ops, self.seed, index)

    @staticmethod
    def _size(path: str) -> int:
        try:
            return os.stat(path).st_size
        except OSError:
            return 0

    def sanitizer_news(self) -> str:
        """Sanitizer reports that the logs gained since the last look (warnings ignored)."""
        news = []
        for i, path in enumerate(self.logs):
            size = self._size(path)
            if size > self.log_sizes[i]:
                with open(path, errors="replace") as f:
                    f.seek(self.log_sizes[i])
                    news.append(f.read())
                self.log_sizes[i] = size
        return sanitizer.reports_in("".join(news))

    def run(self, case: Case) -> dict:
        flambeau = self.flambeau
        ns = dict(self.globals)
        flambeau.manual_seed(case.index % 65536)
        flambeau.set_num_threads(self.threads)  # the program may raise it for itself
        try:
            exec(compile("\n".join(case.setup), "<setup>", "exec"), ns)
        except Exception as e:
            self.last = ("skipped", None)
            return {"outcome": "skipped", "exc": type(e).__name__, "msg": describe(e)}
        phase = "call"
        try:
            result = eval(compile(case.call, "<call>", "eval"), ns)
            phase = "check"
            ns["consume"](result)
            outcome = {"outcome": "ok"}
            self.last = ("ok", result)
        except BaseException as e:  # SystemExit from an operator is a finding too
            if isinstance(e, KeyboardInterrupt):
                raise
            kind = classify(e) if phase == "call" else "unclean"
            message = describe(e) if phase == "call" else f"reading the result: {describe(e)}"
            outcome = {"outcome": kind, "exc": type(e).__name__, "msg": message}
            self.last = (kind, e)
        outcome["phase"] = phase
        return outcome

    def ask_torch(self, case: Case) -> None:
        """Run the same program against PyTorch; report a disagreement that is ours."""
        from . import oracle

        self.emit({"oracle_start": case.index})  # a torch crash from here on is not ours
        theirs = oracle.run(self.torch, "\n".join(case.setup), case.call, case.index)
        why = oracle.compare(case.op.split(".")[0], case.call + "\n".join(case.setup),
                             self.last, theirs)  # fmt: skip
        event = {"oracle": case.index, "op": case.op, "form": case.form, "why": why}
        if why:
            event.update(self.summary(case))
        self.emit(event)

    def serve(self) -> None:
        self.emit({"ready": len(self.ops), "pid": os.getpid()})
        for line in sys.stdin:
            command = json.loads(line)
            if "describe" in command:
                case = self.case(command["describe"])
                self.emit({"described": case.index, **self.summary(case)})
            elif "run" in command:
                start, stop = command["run"]
                for index in range(start, stop):
                    case = self.case(index)
                    started = time.perf_counter()
                    event = {"done": index, "op": case.op, "form": case.form, **self.run(case)}
                    seconds = time.perf_counter() - started
                    if seconds > SLOW_CALL:
                        event["seconds"] = round(seconds, 2)
                    news = self.sanitizer_news() if self.logs else ""
                    if news:
                        event.update(outcome="sanitizer", report=news)
                    if event["outcome"] in ("unclean", "sanitizer"):
                        event.update(self.summary(case, consume=event.get("phase") == "check"))
                    self.emit(event)
                    if self.torch is not None and event["outcome"] in ("ok", "clean"):
                        self.ask_torch(case)
                    self.last = ("skipped", None)
                self.emit({"batch": [start, stop]})

    def summary(self, case: Case, consume: bool = False) -> dict:
        return {
            "op": case.op,
            "form": case.form,
            "hostile": case.hostile,
            "program": case.program(consume=consume),
        }


def main() -> None:
    config = json.loads(sys.argv[1])
    events = os.fdopen(int(sys.argv[2]), "w", buffering=1)
    if config.get("memory_bytes"):
        limit = int(config["memory_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    faulthandler.enable()  # a Python traceback in the log beside the signal
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(5000)
    Worker(config, events).serve()


if __name__ == "__main__":
    main()
