"""The CUDA CTC loss kernels' recursions (csrc/backend/kernels/ctc_math.h), compiled for
the host with g++ (tests/host_kernels/run_ctc_math.cpp), give the CPU's results: nll,
log_alpha and the gradient of flambeau._ctc_loss / _ctc_loss_backward, and the loss and
autograd gradient of F.ctc_loss for every reduction, over random cases (lengths, blank
positions, repeated labels, empty targets, no frames, alignments that cannot exist,
zero_infinity, padded and concatenated targets, float32 and float64).

The host runs each sample on a block of threads taking turns between barriers in a
shuffled order, as the kernel's block would interleave (1, 3 and 8 threads): a missing
barrier, a divergent one or a read of uninitialized scratch shows as a wrong result or
a failed run, and the results do not depend on the block size."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_build import compile_host_program

flambeau = pytest.importorskip("flambeau")
F = pytest.importorskip("flambeau.nn.functional")

# (rtol, atol) of the host's results against the CPU's.
TOL = {np.float64: (1e-12, 1e-12), np.float32: (1e-5, 1e-5)}
REDUCTIONS = ["none", "mean", "sum"]


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    return compile_host_program("run_ctc_math.cpp", tmp_path_factory.mktemp("ctc"))


class Case:
    """A random CTC problem: log_probs (T, N, C), targets padded (N, S) or concatenated,
    the lengths, blank and zero_infinity; offsets as the core's frontend lays them."""

    def __init__(self, seed, dtype, *, frames=None, batch=None, classes=None, padded=None):
        rng = np.random.default_rng(seed)
        self.dtype = dtype
        T = frames or int(rng.integers(1, 13))
        N = batch or int(rng.integers(1, 5))
        C = classes or int(rng.integers(2, 7))
        self.blank = int(rng.integers(0, C))
        others = [c for c in range(C) if c != self.blank]
        x = rng.normal(size=(T, N, C)) * 2
        lp = x - np.log(np.exp(x).sum(-1, keepdims=True))  # log_softmax
        if rng.random() < 0.2:  # not normalized: the kernels must not assume it
            lp = lp + rng.normal(size=lp.shape) * 0.3
        self.log_probs = lp.astype(dtype)
        self.il = [int(rng.integers(0, T + 1)) for _ in range(N)]
        if rng.random() < 0.5:
            self.il[0] = T
        # Target lengths mostly within what the frames allow, sometimes beyond (an
        # infinite loss), 0 included.
        self.tl = [
            int(rng.integers(0, il // 2 + 2 if rng.random() < 0.75 else T + 3)) for il in self.il
        ]
        # Few classes: repeated labels (adjacent ones need a blank between them).
        labels = [[int(rng.choice(others)) for _ in range(n)] for n in self.tl]
        self.padded = bool(rng.random() < 0.5) if padded is None else padded
        if self.padded:
            S = max(self.tl) + int(rng.integers(0, 3))
            self.targets = np.full((N, S), self.blank, dtype=np.int64)
            for b, lab in enumerate(labels):
                self.targets[b, : len(lab)] = lab
                self.targets[b, len(lab) :] = rng.integers(0, C, S - len(lab))  # ignored
            self.offsets = [b * S for b in range(N)]
        else:
            self.targets = np.array([v for lab in labels for v in lab], dtype=np.int64)
            self.offsets = list(np.cumsum([0] + self.tl[:-1]))
        self.zero_infinity = bool(rng.random() < 0.5)
        self.grad_out = rng.normal(size=N).astype(dtype)

    def host(self, exe, threads=1, seed=0, grad_out=None):
        """(nll, log_alpha, grad) as the CUDA kernels compute them, run on the host."""
        T, N, C = self.log_probs.shape
        go = self.grad_out if grad_out is None else grad_out
        flat = self.targets.reshape(-1)
        words = [
            "f32" if self.dtype == np.float32 else "f64",
            T,
            N,
            C,
            self.blank,
            int(self.zero_infinity),
            threads,
            seed,
            *(float(v).hex() for v in self.log_probs.reshape(-1)),
            len(flat),
            *flat.tolist(),
            *self.offsets,
            *self.il,
            *self.tl,
            *(float(v).hex() for v in go),
        ]
        out = subprocess.run(
            [str(exe)],
            input=" ".join(map(str, words)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        parsed = {}
        for line in out.splitlines():
            name, *values = line.split()
            parsed[name] = np.array([float.fromhex(v) for v in values], dtype=np.float64)
        return (
            parsed["nll"],
            parsed["log_alpha"].reshape(N, T, 2 * max(self.tl) + 1),
            parsed["grad"].reshape(T, N, C),
        )

    def tensors(self, int32=False):
        it = np.int32 if int32 else np.int64
        return flambeau.tensor(self.log_probs), flambeau.tensor(self.targets.astype(it))


def assert_matches(got, want, dtype, what):
    """Equal infinities and NaN where want has them, else within the dtype's tolerance."""
    rtol, atol = TOL[dtype]
    got, want = np.atleast_1d(got), np.atleast_1d(np.asarray(want, dtype=np.float64))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN")
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{what}: inf")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol, err_msg=what)


SEEDS = range(40)
DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("seed", SEEDS)
def test_forward_and_backward_match_the_cpu_kernels(exe, seed, dtype):
    case = Case(seed, dtype)
    lp, tg = case.tensors(int32=seed % 2 == 1)
    nll, alpha = flambeau._ctc_loss(lp, tg, case.il, case.tl, case.blank, case.zero_infinity)
    grad = flambeau._ctc_loss_backward(
        flambeau.tensor(case.grad_out),
        lp,
        tg,
        case.il,
        case.tl,
        nll,
        alpha,
        case.blank,
        case.zero_infinity,
    )
    got = case.host(exe)
    assert_matches(got[0], nll.numpy(), dtype, "nll")
    assert_matches(got[1], alpha.numpy(), dtype, "log_alpha")
    assert_matches(got[2], grad.numpy(), dtype, "grad")


@pytest.mark.parametrize("threads", [3, 8])
@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_results_do_not_depend_on_the_block(exe, seed, threads):
    case = Case(seed, np.float64)
    one = case.host(exe, threads=1)
    many = case.host(exe, threads=threads, seed=seed)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)


def _reduction_grad_out(case, reduction, weights):
    """The grad_out F.ctc_loss's backward hands _ctc_loss_backward for `reduction`."""
    N = len(case.tl)
    if reduction == "none":
        return weights
    if reduction == "sum":
        return np.ones(N, dtype=case.dtype)
    return (1.0 / N / np.maximum(np.array(case.tl, dtype=np.float64), 1)).astype(case.dtype)


def _reduce(nll, case, reduction):
    if case.zero_infinity:
        nll = np.where(np.isposinf(nll), 0.0, nll)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return (nll / np.maximum(np.array(case.tl, dtype=np.float64), 1)).mean()


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", range(100, 112))
def test_ctc_loss_and_its_autograd_gradient_match_the_cpu(exe, seed, reduction, dtype):
    case = Case(seed, dtype)
    lp, tg = case.tensors()
    il = flambeau.tensor(case.il, dtype=flambeau.int32) if seed % 2 else case.il
    tl = flambeau.tensor(case.tl, dtype=flambeau.int32) if seed % 2 else case.tl
    x = lp.clone().requires_grad_(True)
    loss = F.ctc_loss(
        x, tg, il, tl, blank=case.blank, reduction=reduction, zero_infinity=case.zero_infinity
    )
    weights = case.grad_out
    if reduction == "none":
        loss.backward(flambeau.tensor(weights))
    else:
        loss.backward()
    go = _reduction_grad_out(case, reduction, weights)
    nll, _, grad = case.host(exe, threads=4, seed=seed, grad_out=go)
    assert_matches(_reduce(nll, case, reduction), loss.detach().numpy(), dtype, "loss")
    assert_matches(grad, x.grad.numpy(), dtype, "grad")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
def test_a_larger_batch_matches_the_cpu(exe, dtype):
    # Longer sequences, more classes and states than the block has threads.
    case = Case(7, dtype, frames=60, batch=3, classes=40, padded=False)
    case.tl = [25, 0, 9]
    case.il = [60, 60, 17]
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 40, sum(case.tl))
    labels[labels == case.blank] = (case.blank + 1) % 40
    labels[5] = labels[4]  # a repeat
    case.targets, case.offsets = labels.astype(np.int64), [0, 25, 25]
    case.grad_out = np.ones(3, dtype=dtype)
    lp, tg = case.tensors()
    nll, alpha = flambeau._ctc_loss(lp, tg, case.il, case.tl, case.blank)
    grad = flambeau._ctc_loss_backward(
        flambeau.ones(3, dtype=lp.dtype), lp, tg, case.il, case.tl, nll, alpha, case.blank
    )
    got = case.host(exe, threads=8, seed=1)
    assert np.isfinite(got[0]).all()
    assert_matches(got[0], nll.numpy(), dtype, "nll")
    assert_matches(got[1], alpha.numpy(), dtype, "log_alpha")
    assert_matches(got[2], grad.numpy(), dtype, "grad")


def test_labels_equal_to_blank_follow_the_cpu(exe):
    # The CPU does not refuse a label equal to blank: its class then sums over the blank
    # states and those labels' states together, as the kernel's chains do.
    case = Case(5, np.float64, frames=8, batch=2, classes=4, padded=True)
    case.blank = 2
    case.targets = np.array([[2, 1, 2], [0, 2, 2]], dtype=np.int64)
    case.offsets, case.tl, case.il = [0, 3], [3, 3], [8, 7]
    case.zero_infinity = False
    lp, tg = case.tensors()
    nll, alpha = flambeau._ctc_loss(lp, tg, case.il, case.tl, case.blank)
    grad = flambeau._ctc_loss_backward(
        flambeau.tensor(case.grad_out), lp, tg, case.il, case.tl, nll, alpha, case.blank
    )
    got = case.host(exe, threads=3, seed=2)
    assert_matches(got[0], nll.numpy(), np.float64, "nll")
    assert_matches(got[2], grad.numpy(), np.float64, "grad")


def test_infinite_losses_with_and_without_zero_infinity(exe):
    # Two frames cannot hold the labels 1 1 (a blank must separate them): inf, whose
    # gradient is NaN without zero_infinity (as the CPU's and PyTorch's) and 0 with it.
    for zero_infinity in (False, True):
        case = Case(1, np.float64, frames=2, batch=2, classes=3, padded=True)
        case.blank = 0
        case.targets = np.array([[1, 1], [2, 0]], dtype=np.int64)
        case.offsets, case.tl, case.il = [0, 2], [2, 1], [2, 2]
        case.zero_infinity = zero_infinity
        lp, tg = case.tensors()
        nll, alpha = flambeau._ctc_loss(lp, tg, case.il, case.tl, 0)
        grad = flambeau._ctc_loss_backward(
            flambeau.tensor(case.grad_out), lp, tg, case.il, case.tl, nll, alpha, 0, zero_infinity
        )
        got = case.host(exe, threads=3)
        assert got[0][0] == np.inf and np.isfinite(got[0][1])
        assert (got[2][:, 0] == 0).all() if zero_infinity else np.isnan(got[2][:, 0]).all()
        assert_matches(got[0], nll.numpy(), np.float64, "nll")
        assert_matches(got[2], grad.numpy(), np.float64, "grad")
