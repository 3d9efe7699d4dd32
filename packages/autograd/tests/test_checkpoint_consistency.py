"""Non-reentrant checkpointing saves exactly what the formulas read.

PyTorch's checkpoint compares the tensors the recomputation saves with those the forward
saved (how many, and their shapes, dtypes and devices), and raises CheckpointError
("Recomputed values for the following tensors have different metadata than during the
forward pass") when they differ. The comparison is only as good as what counts as saved:
an operation saves the tensors its backward reads (x.exp() its result, a slice nothing),
not every input and output. Under checkpointing the graph must still hold none of the
tensors it does not save.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd.graph import saved_tensors_hooks
from flambeau.utils import checkpoint as ck


def test_a_recomputation_that_differs_is_refused():
    # The forward saves exp's result (shape (2,)); the recomputation slices first, then
    # saves exp's result of shape (1,). Counting the slice's input or output as saved made
    # the first recomputed tensor x itself, of the forward's metadata: no error, and the
    # gradient x instead of exp(x).
    calls = [0]

    def f(t):
        calls[0] += 1
        return t.exp() if calls[0] == 1 else t[:1].exp()

    x = F.tensor([0.0, 0.6931], requires_grad=True)
    out = ck.checkpoint(f, x, use_reentrant=False)
    with pytest.raises(ck.CheckpointError, match="different metadata than during the forward"):
        out.sum().backward()
    assert x.grad is None


def test_without_early_stop_too():
    calls = [0]

    def f(t):
        calls[0] += 1
        return t.exp() if calls[0] == 1 else t[:1].exp()

    x = F.tensor([0.0, 0.6931], requires_grad=True)
    out = ck.checkpoint(f, x, use_reentrant=False, early_stop=False)
    with pytest.raises(ck.CheckpointError, match="different metadata than during the forward"):
        out.sum().backward()


class Counting(saved_tensors_hooks):
    """Hooks that, like checkpoint's, want the graph to hold no tensor: records the shape
    of each tensor packed."""

    _packs_every_tensor = True

    def __init__(self):
        self.packed = []
        super().__init__(self._pack, lambda t: t)

    def _pack(self, t):
        self.packed.append(tuple(t.shape))
        return t


@pytest.mark.parametrize(
    "fn,saved",
    [
        (lambda x, y: x.exp(), [(2, 3)]),  # its result
        (lambda x, y: x.sin(), [(2, 3)]),  # its input
        (lambda x, y: x[:1], []),  # a view: geometry only
        (lambda x, y: x.t(), []),
        (lambda x, y: x + 1, []),
        (lambda x, y: x * 3.0, []),
        (lambda x, y: x * y, [(2, 3), (3,)]),
        (lambda x, y: x.sum(), []),
        (lambda x, y: (x * 1).t_(), []),  # an in-place view op
        (lambda x, y: x[:1].exp(), [(1, 3)]),
    ],
)
def test_what_an_operation_saves(fn, saved):
    x = F.ones(2, 3, requires_grad=True)
    y = F.full((3,), 2.0, requires_grad=True)
    with Counting() as hooks:
        fn(x, y)
    assert hooks.packed == saved


def gradients(fn, *inputs, checkpointed):
    xs = [t.detach().requires_grad_(True) for t in inputs]
    out = ck.checkpoint(fn, *xs, use_reentrant=False) if checkpointed else fn(*xs)
    (out * F.linspace(0.5, 1.5, out.numel()).reshape(out.shape)).sum().backward()
    return [None if t.grad is None else t.grad.numpy() for t in xs]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, w: (x @ w)[:, 1:].exp().sum(1),
        lambda x, w: (x.t()[1:] * 2.0).sin() + w.sum(),
        lambda x, w: ((x + 1).clamp(0, 2) * w[0]).tanh(),
        lambda x, w: F.where(x > 0, x, 0.0).unsqueeze(0).expand(2, 3, 4).sum(0) @ w[:4],
        lambda x, w: (x * 1).t_().reshape(-1).cumsum(0),
        lambda x, w: F.cat([x[:1], x.exp()]).log_softmax(1) * w[1, 1],
    ],
)
def test_gradients_match_the_unchecked_ones(fn):
    rng = np.random.default_rng(0)
    x = F.tensor(rng.standard_normal((3, 4)), dtype=F.float32)
    w = F.tensor(rng.standard_normal((4, 4)), dtype=F.float32)
    plain = gradients(fn, x, w, checkpointed=False)
    checked = gradients(fn, x, w, checkpointed=True)
    for a, b in zip(plain, checked):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def allocated() -> int:
    gc.collect()
    return F._C._allocator_stats()["allocated_bytes"]


def test_the_graph_holds_no_tensor_it_does_not_save():
    # x + 1 (4 MB) and its view reach backward as metadata only; exp's result (1 MB) is
    # saved, through the checkpoint's placeholder. Unchecked, the graph holds both.
    x = F.randn(1000, 1000, requires_grad=True)

    def fn(t):
        return (t + 1)[::2, ::2].exp()

    base = allocated()
    out = fn(x)
    unchecked = allocated() - base
    del out
    base = allocated()
    out = ck.checkpoint(fn, x, use_reentrant=False)
    checked = allocated() - base  # the output (1 MB) only
    assert unchecked > 4_500_000
    assert checked < 1_500_000
    out.sum().backward()
    np.testing.assert_allclose(
        x.grad[::2, ::2].numpy(), (x[::2, ::2] + 1).exp().detach().numpy(), rtol=1e-6
    )
    assert float(x.grad[1::2].abs().sum()) == 0.0


def test_agrees_with_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import CheckpointError

    calls = [0]

    def f(t):
        calls[0] += 1
        return t.exp() if calls[0] == 1 else t[:1].exp()

    x = torch.tensor([0.0, 0.6931], requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata than during the forward"):
        out.sum().backward()
