"""Memory formats: clone, the *_like creators, contiguous, is_contiguous and to lay out their
results as PyTorch does. Expected strides are derived by hand from the rules:

* preserve_format keeps the strides of a dense, non-overlapping input; otherwise the result is
  dense with the input's dims in the input's memory order (innermost = smallest stride; a zero
  stride gives no order, so a broadcast input comes out row-major);
* channels_last lays out (N, C, H, W) with C innermost, then W, H, N; channels_last_3d likewise
  for (N, C, D, H, W).
"""

import copy
import pickle

import numpy as np
import pytest

import flambeau

CL = flambeau.channels_last
CL3 = flambeau.channels_last_3d
PRESERVE = flambeau.preserve_format
CONTIG = flambeau.contiguous_format


def t(*shape):
    return flambeau.arange(int(np.prod(shape)), dtype=flambeau.float32).reshape(*shape)


def same_values(a, b):
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# (input, preserve_format strides)
def preserve_cases():
    return [
        ("contiguous", t(2, 3), (3, 1)),
        ("transposed", t(2, 3).t(), (1, 3)),
        ("gappy", t(2, 3)[:, ::2], (2, 1)),  # strides (3, 2): gaps closed, order kept
        ("gappy_transposed", t(4, 6).t()[:, ::2], (1, 6)),  # strides (1, 12)
        ("expanded", t(3, 1).expand(3, 4), (4, 1)),  # strides (1, 0): row-major
        ("permuted_gappy", t(2, 3, 4).permute(2, 0, 1)[:, :, ::2], (1, 8, 4)),  # (1, 12, 8)
        ("size1_odd_stride", flambeau.empty_strided((2, 1, 3), (3, 100, 1)).fill_(1), (3, 100, 1)),
        ("channels_last", t(2, 3, 4, 5).contiguous(memory_format=CL), (60, 1, 15, 3)),
        ("zero_size", t(0, 3).t(), (1, 3)),
    ]


LIKE = {
    "empty_like": lambda x, **k: flambeau.empty_like(x, **k),
    "zeros_like": lambda x, **k: flambeau.zeros_like(x, **k),
    "ones_like": lambda x, **k: flambeau.ones_like(x, **k),
    "full_like": lambda x, **k: flambeau.full_like(x, 7, **k),
    "rand_like": lambda x, **k: flambeau.rand_like(x, **k),
    "randn_like": lambda x, **k: flambeau.randn_like(x, **k),
    "randint_like": lambda x, **k: flambeau.randint_like(x, 5, **k),
    "randint_like_low": lambda x, **k: flambeau.randint_like(x, 2, 5, **k),
}


# --- the memory_format objects ---------------------------------------------------------


def test_objects():
    assert repr(CL) == str(CL) == "flambeau.channels_last"
    assert repr(CL3) == "flambeau.channels_last_3d"
    assert repr(PRESERVE) == "flambeau.preserve_format"
    assert repr(CONTIG) == "flambeau.contiguous_format"
    for f in (CL, CL3, PRESERVE, CONTIG):
        assert isinstance(f, flambeau.memory_format)
        assert f == f and hash(f) == hash(f)
        assert pickle.loads(pickle.dumps(f)) is f
        assert copy.deepcopy(f) is f
    assert CL != CONTIG and PRESERVE != CONTIG
    assert repr(flambeau.memory_format) == "<class 'flambeau.memory_format'>"
    with pytest.raises(TypeError, match="cannot create"):
        flambeau.memory_format()


# --- clone ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", preserve_cases(), ids=lambda c: c[0])
def test_clone_preserve(case):
    _, x, strides = case
    for y in (x.clone(), flambeau.clone(x), x.clone(memory_format=PRESERVE)):
        assert y.stride() == strides
        same_values(y, x)
        assert y.data_ptr() != x.data_ptr() or x.numel() == 0


def test_clone_none_is_preserve():
    x = t(2, 3).t()
    assert x.clone(memory_format=None).stride() == (1, 3)


def test_clone_docs_example():
    assert t(2, 3).t().clone().stride() == (1, 3)


@pytest.mark.parametrize("case", preserve_cases(), ids=lambda c: c[0])
def test_clone_contiguous_format(case):
    _, x, _ = case
    y = x.clone(memory_format=CONTIG)
    assert y.is_contiguous()
    same_values(y, x)


def test_clone_channels_last():
    x = t(2, 3, 4, 5)
    for src in (x, x.transpose(0, 3).transpose(0, 3), x[:, :, :, :], x.permute(0, 2, 3, 1)):
        y = src.clone(memory_format=CL)
        expected = {(2, 3, 4, 5): (60, 1, 15, 3), (2, 4, 5, 3): (60, 1, 12, 4)}[tuple(src.shape)]
        assert y.stride() == expected
        same_values(y, src)
    z = t(2, 3, 4, 5, 6).clone(memory_format=CL3)
    assert z.stride() == (360, 1, 90, 18, 3)
    same_values(z, t(2, 3, 4, 5, 6))


def test_channels_last_zero_size():
    # As PyTorch: the strides outside a zero-size dim are products with it (0).
    assert t(2, 0, 2, 2).clone(memory_format=CL).stride() == (0, 1, 0, 0)
    assert t(0, 3, 2, 2).clone(memory_format=CL).stride() == (12, 1, 6, 3)
    assert t(2, 3, 0, 2).clone(memory_format=CL).stride() == (0, 1, 6, 3)


def test_clone_channels_last_rank_errors():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        t(3, 4).clone(memory_format=CL)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        t(2, 3, 4, 5).clone(memory_format=CL3)


# --- *_like -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(LIKE))
@pytest.mark.parametrize("case", preserve_cases(), ids=lambda c: c[0])
def test_like_preserve(name, case):
    _, x, strides = case
    fn = LIKE[name]
    assert fn(x).stride() == strides
    assert fn(x, memory_format=PRESERVE).stride() == strides
    assert fn(x, memory_format=None).stride() == strides
    y = fn(x, memory_format=CONTIG)
    assert y.is_contiguous() and y.shape == x.shape


@pytest.mark.parametrize("name", sorted(LIKE))
def test_like_channels_last(name):
    fn = LIKE[name]
    assert fn(t(2, 3, 4, 5), memory_format=CL).stride() == (60, 1, 15, 3)
    assert fn(t(2, 3, 4, 5, 6), memory_format=CL3).stride() == (360, 1, 90, 18, 3)
    with pytest.raises(RuntimeError, match="required rank 4"):
        fn(t(2, 3), memory_format=CL)
    with pytest.raises(TypeError, match="memory_format"):
        fn(t(2, 3), memory_format="channels_last")


def test_like_values():
    x = t(2, 3, 4, 5).transpose(1, 3)
    same_values(flambeau.zeros_like(x), flambeau.zeros(2, 5, 4, 3))
    same_values(flambeau.ones_like(x, memory_format=CL), flambeau.ones(2, 5, 4, 3))
    same_values(flambeau.full_like(x, 7, dtype=flambeau.int64), flambeau.full((2, 5, 4, 3), 7))
    r = flambeau.randint_like(x, 2, 5, memory_format=CL).numpy()
    assert r.min() >= 2 and r.max() < 5
    u = flambeau.rand_like(x).numpy()
    assert u.min() >= 0 and u.max() < 1


# --- contiguous / is_contiguous -----------------------------------------------------------


def test_contiguous_channels_last():
    x = t(2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3)
    same_values(y, x)
    assert y.is_contiguous(memory_format=CL) and not y.is_contiguous()
    z = y.contiguous(memory_format=CL)  # already channels-last: self
    assert z.data_ptr() == y.data_ptr() and z.stride() == y.stride()
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1)
    same_values(back, x)
    w = t(2, 3, 4, 5, 6).contiguous(memory_format=CL3)
    assert w.stride() == (360, 1, 90, 18, 3)
    assert w.is_contiguous(memory_format=CL3)


def test_contiguous_default_and_preserve():
    x = t(3, 4).t()
    assert x.contiguous().stride() == (3, 1)
    assert x.contiguous(memory_format=CONTIG).stride() == (3, 1)
    c = t(3, 4)
    assert c.contiguous(memory_format=PRESERVE).data_ptr() == c.data_ptr()
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=PRESERVE)


def test_contiguous_errors():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        t(2, 3, 4).contiguous(memory_format=CL)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        t(2, 3, 4, 5).contiguous(memory_format=CL3)
    with pytest.raises(TypeError, match="memory_format"):
        t(2, 3).contiguous(memory_format=None)
    with pytest.raises(TypeError, match="memory_format"):
        t(2, 3).contiguous(memory_format="channels_last")


def test_is_contiguous():
    x = t(2, 3, 4, 5)
    assert x.is_contiguous() and x.is_contiguous(memory_format=CONTIG)
    assert x.is_contiguous(memory_format=PRESERVE)
    assert not x.is_contiguous(memory_format=CL)
    assert not x.permute(0, 2, 3, 1).is_contiguous(memory_format=CL)  # NHWC shape, not strides
    # Size-1 dims take any stride: (2, 3, 1, 1) is both row-major and channels-last.
    s = t(2, 3, 1, 1)
    assert s.is_contiguous(memory_format=CL) and s.is_contiguous()
    assert not t(2, 3, 4).is_contiguous(memory_format=CL)  # other ranks: False, no error
    assert not t(0, 3, 2, 2).is_contiguous(memory_format=CL)  # as PyTorch
    assert not x.is_contiguous(memory_format=CL3)
    with pytest.raises(TypeError, match="memory_format"):
        x.is_contiguous(memory_format=None)
    with pytest.raises(TypeError, match="positional"):
        x.is_contiguous(CL)


# --- to -----------------------------------------------------------------------------------


def test_to_memory_format():
    x = t(2, 3, 4, 5)
    y = x.to(flambeau.float64, memory_format=CL)
    assert y.dtype == flambeau.float64 and y.stride() == (60, 1, 15, 3)
    same_values(y, x.double())
    z = x.to(memory_format=CL)
    assert z.dtype == flambeau.float32 and z.stride() == (60, 1, 15, 3)
    same_values(z, x)
    assert x.to(memory_format=CONTIG).data_ptr() == x.data_ptr()  # nothing to change: self
    assert z.to(memory_format=CL).data_ptr() == z.data_ptr()
    assert z.to("cpu", flambeau.float32, memory_format=CONTIG).stride() == (60, 20, 5, 1)
    assert x.to(flambeau.zeros(1, dtype=flambeau.int32), memory_format=CL).stride() == (
        60,
        1,
        15,
        3,
    )
    # preserve (the default) keeps a dense input's strides through a dtype change.
    tr = x.transpose(0, 3)  # strides (1, 20, 5, 60)
    assert tr.to(flambeau.float64).stride() == (1, 20, 5, 60)
    assert tr.double().stride() == (1, 20, 5, 60)
    same_values(tr.to(flambeau.float64), tr)
    with pytest.raises(RuntimeError, match="required rank 4"):
        t(2, 3).to(memory_format=CL)
    with pytest.raises(TypeError):
        x.to(flambeau.float64, False, False, CL)  # keyword-only, as in PyTorch


def test_wrong_type_messages():
    with pytest.raises(TypeError, match=r"clone\(\).*'memory_format'.*flambeau.memory_format"):
        flambeau.clone(t(2), memory_format=1)
    with pytest.raises(TypeError, match="memory_format"):
        flambeau.empty_like(t(2), memory_format=flambeau.float32)
