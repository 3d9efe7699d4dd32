"""--oracle torch: the same program run against PyTorch, for the cases PyTorch settles.

The generated program names `flambeau` only; here it runs with `flambeau` bound to
a stand-in that resolves each name in torch (table names are aten names, so some
live in torch._C._nn, torch._C._linalg, ...). Only disagreements PyTorch can be
trusted on become findings (outcome "oracle"):

* we return, PyTorch raises a clean error: a check we are missing (unless the
  error is PyTorch's own limit: a dtype it has no kernel for, or a TypeError
  from a signature that differs between an aten function and our binding);
* both return, the inputs were identical (written out, not drawn from a
  generator), and a result of ours has another shape than PyTorch's, or NaN
  where PyTorch's has a number.

It is a triage aid, not a gate: the table's aten names do not always reach the
same overload in torch, so read each disagreement before fixing it.

PyTorch crashing, hanging or raising something odd says nothing about us and is
ignored; random operators and uninitialised creation (empty*) are compared by
outcome only.
"""

from __future__ import annotations

import math
import re
import sys

from .outcomes import classify, describe

NONDETERMINISTIC = re.compile(
    r"^(empty\w*|rand\w*|normal\w*|bernoulli\w*|multinomial|poisson|\w*dropout\w*|uniform_|"
    r"random_|exponential_|geometric_|cauchy_|log_normal_|native_dropout\w*)$"
)
COMPARE_LIMIT = 4096  # elements: larger results are compared by shape only


class TorchAsFlambeau:
    """Looks up `flambeau.<name>` in torch and its aten namespaces."""

    def __init__(self, torch) -> None:
        self._torch = torch
        self._spaces = [torch, torch._C._VariableFunctions, torch._C._nn, torch._C._linalg,
                        torch._C._special]  # fmt: skip

    def __getattr__(self, name: str):
        for space in self._spaces:
            if hasattr(space, name):
                return getattr(space, name)
        if hasattr(self._torch.ops.aten, name):
            return getattr(self._torch.ops.aten, name)
        raise AttributeError(f"torch has no {name}")


def load_torch(extra_path: str | None):
    if extra_path:
        sys.path.append(extra_path)  # after our own paths: our numpy stays ours
    import torch

    torch.set_num_threads(1)
    return torch


def tensors(result) -> list:
    if isinstance(result, tuple | list):
        return [t for r in result for t in tensors(r)]
    return [result] if hasattr(result, "shape") and hasattr(result, "dtype") else []


def _nan_positions(values: list) -> list[bool]:
    def isnan(x) -> bool:
        if isinstance(x, complex):
            return math.isnan(x.real) or math.isnan(x.imag)
        return isinstance(x, float) and math.isnan(x)

    return [isnan(x) for x in values]


def run(torch_ns, setup: str, call: str, index: int):
    """(outcome, result) of the program under torch: ok, clean, or unclean (ignored)."""
    ns = {"flambeau": torch_ns, "inf": math.inf, "nan": math.nan}
    torch_ns._torch.manual_seed(index % 65536)
    try:
        exec(compile(setup, "<setup>", "exec"), ns)
    except Exception:
        return "skipped", None
    try:
        return "ok", eval(compile(call, "<call>", "eval"), ns)
    except Exception as e:
        return classify(e), e


# PyTorch errors that say nothing about our answer: a dtype PyTorch lacks a kernel for,
# and the signature differences of aten functions (TypeError) that the table's names
# reach in torch.
_LIMITATION = re.compile(
    r"not implemented for|[Uu]nsupported dtype|does not support|not supported|Could not run"
)


def _torch_limitation(exc: BaseException) -> bool:
    return isinstance(exc, TypeError) or bool(_LIMITATION.search(str(exc)))


def compare(op_name: str, program: str, ours: tuple, theirs: tuple) -> str:
    """Why our outcome disagrees with PyTorch's in a way that is ours to fix; '' if not."""
    (our_kind, our_result), (their_kind, their_result) = ours, theirs
    if our_kind == "ok" and their_kind == "clean" and not _torch_limitation(their_result):
        return f"returned where torch raises {type(their_result).__name__}: " + describe(
            their_result, 200
        )
    if our_kind != "ok" or their_kind != "ok":
        return ""
    if NONDETERMINISTIC.match(op_name) or "Generator()" in program or "rand" in program:
        return ""  # inputs or results drawn from a generator: values (and nonzero's shape) differ
    mine, torchs = tensors(our_result), tensors(their_result)
    if len(mine) != len(torchs):
        return ""
    for i, (a, b) in enumerate(zip(mine, torchs)):
        if tuple(a.shape) != tuple(b.shape):
            return f"output {i} has shape {tuple(a.shape)}, torch's {tuple(b.shape)}"
    for i, (a, b) in enumerate(zip(mine, torchs)):
        if a.numel() > COMPARE_LIMIT or not (a.dtype.is_floating_point or a.dtype.is_complex):
            continue
        ours_nan = _nan_positions(a.reshape(-1).tolist())
        theirs_nan = _nan_positions(b.reshape(-1).tolist())
        if any(x and not y for x, y in zip(ours_nan, theirs_nan)):
            return f"output {i} has NaN where torch's has numbers"
    return ""
