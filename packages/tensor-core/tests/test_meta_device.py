"""The meta device, as PyTorch's: tensors with sizes, strides and dtypes but no data.

Every row of the operator table runs on meta tensors and must give what the CPU gives
for the same call in everything but values (the same structure, dtypes and shapes, on
the meta device), or raise NotImplementedError where the result depends on the data;
never another error where the CPU succeeds. Then the module workflow (build on meta,
forward and backward, to_empty, load_state_dict), printing, and the errors for reading
data, each against PyTorch's documented behaviour (hand-derived here)."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import nn
from flambeau_testing.convert import to_flambeau
from flambeau_testing.optable import all_tests

META = flambeau.device("meta")


def _has_tensor(x) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    return isinstance(x, flambeau.Tensor)


def _meta(x):
    if isinstance(x, flambeau.Tensor):
        return x.to("meta")
    if isinstance(x, (list, tuple)) and _has_tensor(x):
        return type(x)(_meta(v) for v in x)
    return x


def _structure_difference(got, want, where="result"):
    """How a result on meta differs from the CPU's apart from values (its type, dtypes
    and shapes); None if it does not. Devices are checked apart: rows that make tensors
    from a shape (randint, normal) give CPU tensors on either input."""
    if isinstance(want, flambeau.Tensor):
        if not isinstance(got, flambeau.Tensor):
            return f"{where}: {type(got).__name__} where the CPU gave a tensor"
        if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            found, cpu = (got.dtype, tuple(got.shape)), (want.dtype, tuple(want.shape))
            return f"{where}: {found}, the CPU's {cpu}"
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: {got!r:.60} where the CPU gave {len(want)} items"
        for k, (g, w) in enumerate(zip(got, want)):
            if (found := _structure_difference(g, w, f"{where}[{k}]")) is not None:
                return found
    return None


ROWS = all_tests()


@pytest.mark.parametrize("op", ROWS, ids=[op.id for op in ROWS])
def test_operator_table_row_on_meta_matches_the_cpu_but_for_values(op):
    dtype = op.dtypes[0]
    checked, data_dependent = 0, []
    for i, sample in enumerate(op.samples(dtype, np.random.default_rng(0))):
        args = [to_flambeau(a, dtype) for a in sample.args]
        if not _has_tensor(args):
            continue
        moved = [_meta(a) for a in args]  # before the CPU call, which may work in place
        kwargs = {k: _meta(v) for k, v in sample.kwargs.items()}
        try:
            flambeau.manual_seed(0)
            want = op.fn(*args, **sample.kwargs)
        except Exception:
            continue  # an invalid call: the CPU's error is tested elsewhere
        try:
            got = op.fn(*moved, **kwargs)
        except NotImplementedError as e:  # the result depends on the data
            data_dependent.append(str(e))
            continue
        difference = _structure_difference(got, want)
        assert difference is None, f"{op.id}-{dtype}[{i}]: {difference}"
        checked += 1
    if not checked:
        pytest.skip(f"{op.id}: no case ran on meta ({'; '.join(data_dependent[:1]) or 'none'})")


def test_factories_and_metadata():
    x = flambeau.empty(3, 4, device="meta")
    assert (
        x.device == META and x.device.index is None and x.is_meta and not flambeau.ones(1).is_meta
    )
    assert x.shape == (3, 4) and x.stride() == (4, 1) and x.dtype == flambeau.float32
    assert x.data_ptr() == 0
    for t in (flambeau.zeros(2, device="meta"), flambeau.randn(2, device="meta"),
              flambeau.arange(5, device="meta"), flambeau.full((2,), 3.0, device="meta"),
              flambeau.empty_like(x), flambeau.ones(2).to("meta"), x.new_zeros(3)):  # fmt: skip
        assert t.is_meta
    huge = flambeau.empty(10**12, dtype=flambeau.uint8, device="meta")  # no memory behind it
    assert huge.numel() == 10**12 and huge.untyped_storage().nbytes() == 10**12


def test_printing_shows_size_not_values():
    assert repr(flambeau.empty(3, 4, device="meta")) == "tensor(..., device='meta', size=(3, 4))"
    assert (
        repr(flambeau.empty(2, dtype=flambeau.int64, device="meta"))
        == "tensor(..., device='meta', size=(2,), dtype=flambeau.int64)"
    )
    leaf = flambeau.empty((), device="meta", requires_grad=True)
    assert repr(leaf) == "tensor(..., device='meta', size=(), requires_grad=True)"
    assert repr(leaf * 2) == "tensor(..., device='meta', size=(), grad_fn=<MulBackward0>)"


def test_reading_data_raises():
    x = flambeau.empty(3, device="meta")
    reads = [lambda: x.cpu(), lambda: x.tolist(), lambda: x[0].item()]
    reads += [lambda: flambeau.nonzero(x), lambda: x[x > 0], lambda: flambeau.unique(x)]
    for read in reads:
        with pytest.raises(NotImplementedError, match="meta"):
            read()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        x.to("cpu")
    with pytest.raises(TypeError, match="meta"):
        x.numpy()
    with pytest.raises(RuntimeError, match="same device"):
        flambeau.ones(3) + x


def test_value_checks_on_the_host_pass_meta_tensors_through():
    idx = flambeau.empty(2, 5, dtype=flambeau.int64, device="meta")
    assert nn.Embedding(10, 3, device="meta")(idx).shape == (2, 5, 3)
    assert flambeau.multinomial(flambeau.empty(3, 4, device="meta"), 2).shape == (3, 2)
    assert flambeau.poisson(flambeau.empty(3, device="meta")).is_meta
    assert flambeau.histc(flambeau.empty(5, device="meta"), bins=4).shape == (4,)


def test_a_model_is_built_trained_and_materialised_without_memory():
    model = nn.Sequential(nn.Linear(4, 8, device="meta"), nn.ReLU(), nn.Linear(8, 2, device="meta"))
    assert all(p.is_meta for p in model.parameters())
    out = model(flambeau.empty(5, 4, device="meta"))
    loss = nn.functional.cross_entropy(out, flambeau.empty(5, dtype=flambeau.int64, device="meta"))
    loss.backward()
    assert out.shape == (5, 2) and model[0].weight.grad.shape == (8, 4)
    assert model[0].weight.grad.is_meta
    flambeau.optim.Adam(model.parameters()).step()
    model.to_empty(device="cpu")
    assert all(p.device.type == "cpu" for p in model.parameters())
    state = {k: flambeau.full(v.shape, 0.5) for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    np.testing.assert_array_equal(model[2].bias.detach().numpy(), [0.5, 0.5])
    x = flambeau.ones(1, 4)
    # each hidden unit 4 * 0.5 + 0.5 = 2.5; each output 8 * 2.5 * 0.5 + 0.5 = 10.5
    np.testing.assert_allclose(model(x).detach().numpy(), [[10.5, 10.5]])


def test_layers_give_their_shapes_on_meta():
    conv = nn.Conv2d(3, 8, 3, device="meta")
    assert conv(flambeau.empty(2, 3, 16, 16, device="meta")).shape == (2, 8, 14, 14)
    lstm = nn.LSTM(4, 8, num_layers=2, device="meta")
    out, (h, c) = lstm(flambeau.empty(5, 2, 4, device="meta"))
    assert out.shape == (5, 2, 8) and h.shape == (2, 2, 8) and out.is_meta
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, device="meta")
    assert layer(flambeau.empty(2, 5, 16, device="meta")).shape == (2, 5, 16)


def test_a_model_built_in_a_meta_device_block_then_assigned_weights():
    # PyTorch's idiom for big models: build on meta, then load real weights by assignment.
    with flambeau.device("meta"):
        model = nn.Linear(1000, 1000)
        made = [flambeau.randn(3), flambeau.tensor([1.0]), flambeau.arange(4), flambeau.eye(2)]
        kept = flambeau.zeros_like(flambeau.ones(2, device="cpu"))  # *_like keep theirs
    assert model.weight.is_meta and all(t.is_meta for t in made) and not kept.is_meta
    assert flambeau.zeros(1).device.type == "cpu"  # the block is over
    state = {k: flambeau.full(tuple(v.shape), 0.25) for k, v in model.state_dict().items()}
    model.load_state_dict(state, assign=True)
    assert not model.weight.is_meta and model.weight.requires_grad
    assert float(model(flambeau.ones(1, 1000)).sum()) == 1000 * (1000 * 0.25 + 0.25)


def test_set_default_device_and_other_modes_stack():
    from flambeau_testing.dispatch_log import log_mode

    flambeau.set_default_device("meta")
    try:
        with log_mode(flambeau) as log:  # a mode above the default device sees the call first
            t = flambeau.ones(2)
        assert t.is_meta and [f.__name__ for f in log.funcs] == ["ones"]
        assert flambeau.get_default_device() == META
    finally:
        flambeau.set_default_device(None)
    assert flambeau.ones(2).device.type == "cpu" and flambeau.get_default_device().type == "cpu"
