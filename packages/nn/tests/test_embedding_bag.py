"""F.embedding_bag against a NumPy statement of the bags: modes, per-sample weights,
padding, empty bags, include_last_offset, 2-d input; values, shapes and weight gradients."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import f64, np_of

import flambeau
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn import functional as F

RNG = np.random.default_rng(5)
W = RNG.standard_normal((10, 3))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 4])
PSW = RNG.standard_normal(10)
# Bag starts, with empty bags first, inside and last.
STARTS = {
    "plain": [0, 3, 3, 6],
    "leading empty": [0, 0, 4],
    "trailing empty": [0, 5, 10],
    "one bag": [0],
}


def i64(values):
    return flambeau.tensor(np.asarray(values), dtype=flambeau.int64)


def bags_of(starts, n):
    """The index positions of each bag, from the bags' starts."""
    ends = list(starts[1:]) + [n]
    return [list(range(s, e)) for s, e in zip(starts, ends)]


def bag_reference(w, idx, bags, mode, psw=None, padding_idx=None):
    """out[b] and d sum(out * seed) / d weight, for seed = arange (distinct per entry)."""
    out = np.zeros((len(bags), w.shape[1]))
    seed = np.arange(out.size, dtype=np.float64).reshape(out.shape)
    gw = np.zeros_like(w)
    for b, positions in enumerate(bags):
        kept = [i for i in positions if idx[i] != padding_idx]
        if not kept:
            continue
        rows = w[idx[kept]]
        if mode == "max":
            out[b] = rows.max(0)
            arg = rows.argmax(0)
            for j in range(w.shape[1]):
                gw[idx[kept[arg[j]]], j] += seed[b, j]
            continue
        scale = np.ones(len(kept)) if psw is None else psw[kept]
        if mode == "mean":
            scale = scale / len(kept)
        out[b] = (rows * scale[:, None]).sum(0)
        for i, s in zip(kept, scale):
            gw[idx[i]] += s * seed[b]
    return out, gw


def _cases():
    for (name, starts), mode, last, pad, psw in itertools.product(
        STARTS.items(), ("sum", "mean", "max"), (False, True), (None, 4, -1), (False, True)
    ):
        if psw and mode != "sum":
            continue
        yield pytest.param(starts, mode, last, pad, psw, id=f"{name}-{mode}-{last}-{pad}-{psw}")


@pytest.mark.parametrize("starts, mode, last, pad, use_psw", _cases())
def test_embedding_bag_against_numpy(starts, mode, last, pad, use_psw):
    offsets = starts + [len(IDX)] if last else starts  # include_last_offset: the end too
    w = f64(W, requires_grad=True)
    psw = f64(PSW, requires_grad=True) if use_psw else None
    out = F.embedding_bag(
        i64(IDX), w, i64(offsets), mode=mode, per_sample_weights=psw,
        include_last_offset=last, padding_idx=pad,
    )  # fmt: skip
    pad_row = None if pad is None else pad % W.shape[0]
    ref, ref_gw = bag_reference(
        W, IDX, bags_of(starts, len(IDX)), mode, PSW if use_psw else None, pad_row
    )
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(np_of(out), ref, atol=1e-12)
    seed = flambeau.arange(out.numel(), dtype=flambeau.float64).reshape(tuple(out.shape))
    (gw,) = flambeau.autograd.grad(out, [w], seed)
    np.testing.assert_allclose(np_of(gw), ref_gw, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_2d_input_one_bag_per_row(mode, last):
    # include_last_offset does not apply to 2-d input (its offsets are made here).
    rows = np.array([[1, 2, 4], [5, 4, 3], [2, 9, 0]])
    w = f64(W, requires_grad=True)
    out = F.embedding_bag(i64(rows), w, mode=mode, include_last_offset=last)
    ref, ref_gw = bag_reference(W, rows.reshape(-1), [[0, 1, 2], [3, 4, 5], [6, 7, 8]], mode)
    assert tuple(out.shape) == (3, 3)
    np.testing.assert_allclose(np_of(out), ref, atol=1e-12)
    seed = flambeau.arange(9, dtype=flambeau.float64).reshape(3, 3)
    (gw,) = flambeau.autograd.grad(out, [w], seed)
    np.testing.assert_allclose(np_of(gw), ref_gw, atol=1e-12)


def test_embedding_bag_module_include_last_offset():
    bag = flambeau.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True).double()
    with flambeau.no_grad():
        bag.weight.copy_(f64(W))
    out = bag(i64(IDX), i64([0, 3, 3, 10]))
    ref, _ = bag_reference(W, IDX, bags_of([0, 3, 3], len(IDX)), "sum")
    np.testing.assert_allclose(np_of(out), ref, atol=1e-12)


def test_embedding_bag_core_tuple():
    # The core op's offset2bag and output; bag_size for mean (which its backward reads).
    w = f64(W)
    out, offset2bag, bag_size, _ = flambeau.embedding_bag(
        w, i64(IDX), i64([0, 0, 4, 10]), False, 1, False, None, True, 4
    )
    assert tuple(out.shape) == (3, 3)
    np.testing.assert_array_equal(np_of(offset2bag), [1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
    np.testing.assert_array_equal(np_of(bag_size), [0, 3, 4])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_double_backward(mode):
    w = f64(W[:6], requires_grad=True)
    idx, off = i64([1, 2, 4, 5, 4, 3]), i64([0, 2, 2, 6])
    psw = f64(PSW[:6], requires_grad=True) if mode == "sum" else None
    args = (w, psw) if psw is not None else (w,)

    def fn(w, p=None):
        out = F.embedding_bag(idx, w, off, mode=mode, per_sample_weights=p,
                              include_last_offset=True)  # fmt: skip
        return out * out  # not linear in w, so the second derivative is not zero

    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)
