"""nn.utils.prune: masks, the orig/mask reparametrization, iterative and global pruning."""

from __future__ import annotations

import copy
import io
import math
import pickle

import numpy as np
import pytest
from _helpers import np_of

import flambeau
from flambeau import nn
from flambeau.nn.utils import prune

# Distinct magnitudes, so that no selection depends on how ties are broken.
WEIGHT = [[0.5, -3.0, 0.1], [2.0, -0.2, 1.5]]


def linear(weight=WEIGHT, bias=None):
    weight = np.asarray(weight, dtype=np.float32)
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    with flambeau.no_grad():
        layer.weight.copy_(flambeau.tensor(weight))
        if bias is not None:
            layer.bias.copy_(flambeau.tensor(np.asarray(bias, dtype=np.float32)))
    return layer


def zeros_of(mask) -> list:
    """Flat positions of the pruned entries."""
    return sorted(np.flatnonzero(np_of(mask) == 0).tolist())


def hooks(module) -> list:
    return list(module._forward_pre_hooks.values())


# ---- the reparametrization ---------------------------------------------------------------


def test_l1_unstructured_prunes_the_smallest_magnitudes():
    layer = prune.l1_unstructured(linear(), "weight", amount=2)
    assert zeros_of(layer.weight_mask) == [2, 4]  # |0.1|, |-0.2|
    np.testing.assert_array_equal(np_of(layer.weight), [[0.5, -3.0, 0.0], [2.0, 0.0, 1.5]])


def test_float_amount_is_a_rounded_fraction():
    layer = prune.l1_unstructured(linear(), "weight", amount=0.4)  # round(2.4) == 2
    assert zeros_of(layer.weight_mask) == [2, 4]
    layer = prune.l1_unstructured(linear(), "weight", amount=0.5)  # 3 of 6
    assert zeros_of(layer.weight_mask) == [0, 2, 4]
    layer = prune.l1_unstructured(linear(), "weight", amount=1.0)
    assert zeros_of(layer.weight_mask) == list(range(6))
    layer = prune.l1_unstructured(linear(), "weight", amount=0)
    assert zeros_of(layer.weight_mask) == []


def test_pruning_moves_the_parameter_to_orig_and_adds_a_mask_buffer_and_a_hook():
    layer = linear()
    orig = layer.weight
    assert prune.l1_unstructured(layer, "weight", amount=1) is layer
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in layer.named_buffers()] == ["weight_mask"]
    assert layer.weight_orig is orig
    assert not isinstance(layer.weight, nn.Parameter)
    assert layer.weight_mask.dtype == orig.dtype
    (method,) = hooks(layer)
    assert isinstance(method, prune.L1Unstructured) and method._tensor_name == "weight"
    assert list(layer.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    np.testing.assert_array_equal(np_of(layer.weight), np_of(orig) * np_of(layer.weight_mask))


def test_forward_recomputes_the_pruned_tensor_from_orig():
    layer = prune.l1_unstructured(linear(bias=[0.0, 0.0]), "weight", amount=2)
    with flambeau.no_grad():
        layer.weight_orig.fill_(1.0)
    out = layer(flambeau.ones(1, 3))
    np.testing.assert_array_equal(np_of(layer.weight), [[1, 1, 0], [1, 0, 1]])
    np.testing.assert_array_equal(np_of(out), [[2.0, 2.0]])


def test_gradients_reach_orig_through_the_mask():
    layer = prune.l1_unstructured(linear(), "weight", amount=2)
    x = flambeau.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    layer(x).sum().backward()
    # d sum(x W^T + b) / dW[i, j] = sum_n x[n, j], masked.
    expected = np.array([[5.0, 7.0, 0.0], [5.0, 0.0, 9.0]])
    np.testing.assert_array_equal(np_of(layer.weight_orig.grad), expected)
    assert layer.weight_mask.grad is None


def test_conv2d_forward_uses_the_pruned_weight():
    conv = nn.Conv2d(2, 3, 2)
    prune.ln_structured(conv, "weight", amount=1, n=2, dim=0)
    x = flambeau.randn(1, 2, 4, 4)
    masked = conv.weight_orig * conv.weight_mask
    expected = nn.functional.conv2d(x, masked, conv.bias)
    np.testing.assert_allclose(np_of(conv(x)), np_of(expected), rtol=1e-6)
    assert int((conv.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()) == 1


def test_a_pruned_lstm_runs_on_the_pruned_weight():
    lstm = nn.LSTM(4, 3)
    x = flambeau.randn(5, 1, 4)
    prune.l1_unstructured(lstm, "weight_ih_l0", amount=0.5)
    reference = nn.LSTM(4, 3)
    state = {k.replace("_orig", ""): v for k, v in lstm.state_dict().items() if "mask" not in k}
    reference.load_state_dict(state)
    with flambeau.no_grad():
        reference.weight_ih_l0.mul_(lstm.weight_ih_l0_mask)
    np.testing.assert_array_equal(np_of(lstm(x)[0]), np_of(reference(x)[0]))
    lstm(x)[0].sum().backward()
    assert (np_of(lstm.weight_ih_l0_orig.grad)[np_of(lstm.weight_ih_l0_mask) == 0] == 0).all()


def test_importance_scores_decide_instead_of_the_weight():
    scores = flambeau.tensor([[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]])
    layer = prune.l1_unstructured(linear(), "weight", amount=2, importance_scores=scores)
    assert zeros_of(layer.weight_mask) == [4, 5]
    rows = flambeau.tensor([[9.0, 9.0, 9.0], [0.0, 0.0, 1.0]])
    layer = prune.ln_structured(linear(), "weight", 1, n=1, dim=0, importance_scores=rows)
    assert zeros_of(layer.weight_mask) == [3, 4, 5]


def test_importance_scores_of_another_shape_raise():
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(linear(), "weight", 1, importance_scores=flambeau.ones(3))
    with pytest.raises(AssertionError, match="same shape as tensor t"):
        prune.L1Unstructured(1).prune(flambeau.ones(3), importance_scores=flambeau.ones(2))


def test_identity_and_custom_from_mask():
    layer = prune.identity(linear(), "weight")
    np.testing.assert_array_equal(np_of(layer.weight_mask), np.ones((2, 3)))
    np.testing.assert_array_equal(np_of(layer.weight), WEIGHT_F32)
    layer = prune.custom_from_mask(linear(), "weight", flambeau.tensor([[1, 0, 1], [0, 1, 1]]))
    assert layer.weight_mask.dtype == flambeau.float32
    assert zeros_of(layer.weight_mask) == [1, 3]


WEIGHT_F32 = np.asarray(WEIGHT, dtype=np.float32)


# ---- structured pruning ------------------------------------------------------------------

ROWS = [[1.0, 2.0, 2.0], [0.5, -0.5, 0.0], [3.0, 0.0, 0.0], [-1.0, 1.0, 1.0]]
# Per row: L1 5, 1, 3, 3 (tie); L2 3, 0.71, 3 (tie), 1.73; L-inf 2, 0.5, 3, 1; L-(-inf) 1, 0, 0, 1.
COLS = [[1.0, 10.0, -2.0, 0.3], [1.0, -1.0, 2.0, 0.4]]  # per column L2: 1.41, 10.05, 2.83, 0.5


@pytest.mark.parametrize(
    ("n", "kept_rows"),
    [(1, {0, 2, 3}), (2, {0, 2}), (math.inf, {0, 2}), ("fro", {0, 2})],
)
def test_ln_structured_prunes_the_rows_of_smallest_norm(n, kept_rows):
    amount = 4 - len(kept_rows)
    layer = prune.ln_structured(linear(ROWS), "weight", amount=amount, n=n, dim=0)
    kept = {i for i, row in enumerate(np_of(layer.weight_mask)) if row.all()}
    assert kept == kept_rows
    assert set(np.unique(np_of(layer.weight_mask))) <= {0.0, 1.0}
    assert all(not row.any() for i, row in enumerate(np_of(layer.weight_mask)) if i not in kept)


@pytest.mark.parametrize("dim", [1, -1])
def test_ln_structured_along_columns(dim):
    layer = prune.ln_structured(linear(COLS), "weight", amount=0.5, n=2, dim=dim)
    mask = np_of(layer.weight_mask)
    np.testing.assert_array_equal(mask, [[0, 1, 1, 0], [0, 1, 1, 0]])


def test_ln_structured_on_conv_channels():
    conv = nn.Conv2d(3, 4, 2, bias=False)
    scale = flambeau.tensor([1.0, 4.0, 2.0, 3.0]).reshape(4, 1, 1, 1)
    with flambeau.no_grad():
        conv.weight.copy_(flambeau.ones(4, 3, 2, 2) * scale)
    prune.ln_structured(conv, "weight", amount=2, n=1, dim=0)
    channel_kept = (conv.weight_mask.sum(dim=(1, 2, 3)) != 0).tolist()
    assert channel_kept == [False, True, False, True]


def test_structured_pruning_needs_a_multidimensional_tensor_and_a_valid_dim():
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidim"):
        prune.ln_structured(linear(), "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.random_structured(linear(), "weight", amount=1, dim=2)
    layer = linear()
    with pytest.raises(ValueError, match="amount=3 should be smaller than the number"):
        prune.ln_structured(layer, "weight", amount=3, n=1, dim=0)
    assert isinstance(layer.weight, nn.Parameter) and not prune.is_pruned(layer)


def test_random_structured_prunes_whole_channels():
    for _ in range(20):
        layer = prune.random_structured(nn.Linear(5, 4), "weight", amount=3, dim=1)
        column_kept = np_of(layer.weight_mask).all(axis=0)
        column_gone = ~np_of(layer.weight_mask).any(axis=0)
        assert column_kept.sum() == 2 and column_gone.sum() == 3
    layer = prune.random_structured(nn.Linear(5, 4), "weight", amount=0, dim=0)
    assert zeros_of(layer.weight_mask) == []
    layer = prune.random_structured(nn.Linear(5, 4), "weight", amount=1.0, dim=0)
    assert len(zeros_of(layer.weight_mask)) == 20


def test_random_structured_picks_channels_uniformly():
    counts = np.zeros(4)
    trials = 400
    for _ in range(trials):
        mask = prune.RandomStructured(amount=1, dim=0).compute_mask(
            flambeau.ones(4, 2), flambeau.ones(4, 2)
        )
        counts += ~np_of(mask).any(axis=1)
    assert counts.sum() == trials
    # Each channel is pruned with probability 1/4: 100 expected, sd ~8.7.
    assert (np.abs(counts - trials / 4) < 45).all(), counts


# ---- random unstructured -----------------------------------------------------------------


def test_random_unstructured_counts():
    layer = prune.random_unstructured(nn.Linear(4, 5), "weight", amount=7)
    assert len(zeros_of(layer.weight_mask)) == 7
    layer = prune.random_unstructured(nn.Linear(4, 5), "weight", amount=0.25)
    assert len(zeros_of(layer.weight_mask)) == 5


def test_random_unstructured_picks_entries_uniformly():
    counts = np.zeros(6)
    trials = 600
    for _ in range(trials):
        mask = prune.RandomUnstructured(amount=2).compute_mask(flambeau.ones(6), flambeau.ones(6))
        counts += np_of(mask) == 0
    assert counts.sum() == 2 * trials
    # Each entry is pruned with probability 1/3: 200 expected, sd ~11.5.
    assert (np.abs(counts - 200) < 60).all(), counts


# ---- iterative pruning -------------------------------------------------------------------


def test_pruning_twice_combines_the_methods_in_a_container():
    layer = linear()
    prune.l1_unstructured(layer, "weight", amount=2)
    prune.l1_unstructured(layer, "weight", amount=1)
    (container,) = hooks(layer)
    assert isinstance(container, prune.PruningContainer)
    assert [type(m) for m in container] == [prune.L1Unstructured, prune.L1Unstructured]
    assert len(container) == 2 and container[0]._tensor_name == "weight"
    assert zeros_of(layer.weight_mask) == [0, 2, 4]  # then |0.5|
    prune.random_unstructured(layer, "weight", amount=1)
    assert hooks(layer) == [container] and len(container) == 3
    assert len(zeros_of(layer.weight_mask)) == 4
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]


def test_a_later_float_amount_is_a_fraction_of_what_is_left():
    layer = prune.l1_unstructured(linear(), "weight", amount=2)
    prune.l1_unstructured(layer, "weight", amount=0.5)  # 2 of the 4 left
    assert zeros_of(layer.weight_mask) == [0, 2, 4, 5]


def test_random_pruning_after_l1_only_prunes_unpruned_entries():
    for _ in range(10):
        layer = prune.l1_unstructured(linear(), "weight", amount=2)
        prune.random_unstructured(layer, "weight", amount=3)
        zeros = zeros_of(layer.weight_mask)
        assert len(zeros) == 5 and {2, 4} <= set(zeros)


def test_structured_after_structured_only_looks_at_live_channels():
    layer = prune.ln_structured(linear(ROWS), "weight", amount=1, n=2, dim=0)  # row 1
    prune.ln_structured(layer, "weight", amount=1, n=2, dim=0)  # then row 3 (1.73)
    kept = (layer.weight_mask.sum(dim=1) != 0).tolist()
    assert kept == [True, False, True, False]
    # A float amount counts the live channels: round(0.5 * 2) == 1 more.
    prune.ln_structured(layer, "weight", amount=0.5, n=1, dim=0)  # row 2 (3 < 5)
    assert (layer.weight_mask.sum(dim=1) != 0).tolist() == [True, False, False, False]


def test_structured_after_unstructured_keeps_both_masks():
    weight = [[1.0, 2.0, 2.0], [0.5, -0.6, 0.7], [3.0, 0.01, 0.2], [-1.0, 1.0, 1.1]]
    layer = prune.l1_unstructured(linear(weight), "weight", amount=1)  # the 0.01
    assert zeros_of(layer.weight_mask) == [7]
    # The norms are those of the unmasked weight: L1 5, 1.8, 3.21, 3.1.
    prune.ln_structured(layer, "weight", amount=1, n=1, dim=0)
    assert zeros_of(layer.weight_mask) == [3, 4, 5, 7]


def test_unstructured_after_structured_skips_the_pruned_channels():
    layer = prune.ln_structured(linear(COLS), "weight", amount=2, n=2, dim=1)  # cols 0, 3
    prune.l1_unstructured(layer, "weight", amount=1)  # smallest of the live: |-1|
    assert zeros_of(layer.weight_mask) == [0, 3, 4, 5, 7]


def test_custom_mask_after_pruning_multiplies():
    layer = prune.l1_unstructured(linear(), "weight", amount=1)
    prune.custom_from_mask(layer, "weight", flambeau.tensor([[0, 1, 1], [1, 1, 1]]))
    assert zeros_of(layer.weight_mask) == [0, 2]


# ---- global pruning ----------------------------------------------------------------------


def test_global_unstructured_prunes_the_smallest_across_tensors():
    a, b = linear(), linear([[0.05, 4.0], [-0.3, 0.15]])
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=3
    )
    assert zeros_of(a.weight_mask) == [2]  # 0.1; b's 0.05, 0.15 go too
    assert zeros_of(b.weight_mask) == [0, 3]
    assert isinstance(hooks(a)[0], prune.CustomFromMask)
    prune.global_unstructured(
        ((m, "weight") for m in (a, b)), pruning_method=prune.L1Unstructured, amount=0.5
    )
    # Half of the 7 still unpruned, round(3.5) == 4 more: 0.2, 0.3, 0.5, 1.5.
    assert zeros_of(a.weight_mask) == [0, 2, 4, 5]
    assert zeros_of(b.weight_mask) == [0, 2, 3]
    assert isinstance(hooks(a)[0], prune.PruningContainer)


def test_global_unstructured_with_importance_scores():
    a, b = linear(), linear([[0.05, 4.0], [-0.3, 0.15]])
    scores = {(b, "weight"): flambeau.full((2, 2), 100.0)}
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")],
        pruning_method=prune.L1Unstructured,
        importance_scores=scores,
        amount=2,
    )
    assert zeros_of(a.weight_mask) == [2, 4] and zeros_of(b.weight_mask) == []


def test_global_unstructured_checks_its_arguments():
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(3, pruning_method=prune.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured(
            [(linear(), "weight")], prune.L1Unstructured, importance_scores=[1], amount=1
        )
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(linear(), "weight")], prune.LnStructured, amount=1, n=2, dim=0)


# ---- remove and is_pruned ----------------------------------------------------------------


def test_remove_makes_the_pruning_permanent():
    layer = prune.l1_unstructured(linear(), "weight", amount=2)
    prune.l1_unstructured(layer, "weight", amount=1)
    orig = layer.weight_orig
    assert prune.remove(layer, "weight") is layer
    assert isinstance(layer.weight, nn.Parameter) and layer.weight is orig
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight"]
    assert list(layer.named_buffers()) == [] and hooks(layer) == []
    assert not hasattr(layer, "weight_orig") and not hasattr(layer, "weight_mask")
    np.testing.assert_array_equal(np_of(layer.weight), [[0.0, -3.0, 0.0], [2.0, 0.0, 1.5]])
    assert not prune.is_pruned(layer)
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned"):
        prune.remove(layer, "weight")


def test_remove_one_of_two_pruned_tensors():
    layer = prune.identity(prune.l1_unstructured(linear(), "weight", 1), "bias")
    prune.remove(layer, "weight")
    assert prune.is_pruned(layer)
    assert [type(h) for h in hooks(layer)] == [prune.Identity]
    assert list(layer.state_dict()) == ["bias_orig", "weight", "bias_mask"]


def test_is_pruned_looks_at_submodules():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2)))
    assert not prune.is_pruned(net)
    prune.random_unstructured(net[1][0], "bias", amount=1)
    assert prune.is_pruned(net) and prune.is_pruned(net[1]) and not prune.is_pruned(net[0])
    net[0].register_forward_pre_hook(lambda module, args: None)
    assert not prune.is_pruned(net[0])


# ---- argument checks and the method objects ----------------------------------------------


@pytest.mark.parametrize("amount", [-1, 1.5, -0.1])
def test_out_of_range_amounts_raise_value_error(amount):
    message = "should either be a float in the range \\[0, 1\\] or a non-negative integer"
    with pytest.raises(ValueError, match=message):
        prune.L1Unstructured(amount)
    with pytest.raises(ValueError, match=message):
        prune.random_structured(linear(), "weight", amount, dim=0)


@pytest.mark.parametrize("amount", ["half", None, [1]])
def test_non_numeric_amounts_raise_type_error(amount):
    with pytest.raises(TypeError, match="Invalid type for amount: .*Must be int or float."):
        prune.RandomUnstructured(amount)


def test_too_large_a_count_raises_and_leaves_the_module_unpruned():
    layer = linear()
    weight = layer.weight
    with pytest.raises(ValueError, match="amount=7 should be smaller than the number of param"):
        prune.l1_unstructured(layer, "weight", amount=7)
    assert layer.weight is weight and "weight" in layer._parameters
    assert "weight_orig" not in layer._parameters and not prune.is_pruned(layer)


def test_prune_method_applies_a_mask_without_a_module():
    t = flambeau.tensor([3.0, -1.0, 2.0, 0.5])
    np.testing.assert_array_equal(np_of(prune.L1Unstructured(amount=2).prune(t)), [3, 0, 2, 0])
    earlier = flambeau.tensor([0.0, 1.0, 1.0, 1.0])
    pruned = prune.Identity().prune(t, default_mask=earlier)
    np.testing.assert_array_equal(np_of(pruned), [0.0, -1.0, 2.0, 0.5])
    scores = flambeau.tensor([1.0, 2.0, 3.0, 4.0])
    pruned = prune.L1Unstructured(amount=1).prune(t, importance_scores=scores)
    np.testing.assert_array_equal(np_of(pruned), [0.0, -1.0, 2.0, 0.5])


def named(method, name="weight"):
    method._tensor_name = name
    return method


def test_pruning_container_checks_what_it_holds():
    container = prune.PruningContainer(named(prune.Identity()))
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        container.add_pruning_method("l1")
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the param"):
        container.add_pruning_method(named(prune.Identity(), "bias"))
    assert len(container) == 1
    empty = prune.PruningContainer()
    empty._tensor_name = "weight"
    empty.add_pruning_method(named(prune.L1Unstructured(1)))
    assert isinstance(empty[0], prune.L1Unstructured)


def test_pruning_container_checks_the_pruning_type():
    class Odd(prune.BasePruningMethod):
        PRUNING_TYPE = "diagonal"

        def compute_mask(self, t, default_mask):
            return default_mask

    class NoDim(Odd):
        PRUNING_TYPE = "structured"

    for method, error in [(Odd(), ValueError), (NoDim(), AttributeError)]:
        container = prune.PruningContainer(named(prune.Identity()))
        container.add_pruning_method(named(method))
        with pytest.raises(error, match="PRUNING_TYPE"):
            container.compute_mask(flambeau.ones(2, 2), flambeau.ones(2, 2))


def test_custom_mask_of_another_shape_raises():
    with pytest.raises(AssertionError, match="must match self.mask shape"):
        prune.custom_from_mask(linear(), "weight", flambeau.ones(3))


def test_two_pruning_hooks_on_one_tensor_raise():
    layer = prune.identity(linear(), "weight")
    layer.register_forward_pre_hook(named(prune.Identity()))
    with pytest.raises(AssertionError, match="Avoid adding multiple pruning hooks"):
        prune.l1_unstructured(layer, "weight", amount=1)


def test_a_custom_pruning_method():
    class KeepPositive(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            return default_mask * (t > 0).to(default_mask.dtype)

    layer = linear()
    assert isinstance(KeepPositive.apply(layer, "weight"), KeepPositive)
    assert zeros_of(layer.weight_mask) == [1, 4]
    with pytest.raises(TypeError):
        prune.BasePruningMethod()


# ---- copies and state --------------------------------------------------------------------


def test_pickle_round_trip_keeps_the_pruning():
    layer = prune.l1_unstructured(linear(), "weight", amount=2)
    for clone in (pickle.loads(pickle.dumps(layer)), flambeau_load_of(layer)):
        assert prune.is_pruned(clone)
        assert zeros_of(clone.weight_mask) == [2, 4]
        with flambeau.no_grad():
            clone.weight_orig.fill_(1.0)
        clone(flambeau.ones(1, 3))
        np.testing.assert_array_equal(np_of(clone.weight), [[1, 1, 0], [1, 0, 1]])
        np.testing.assert_array_equal(np_of(layer.weight_orig), WEIGHT_F32)


def flambeau_load_of(module):
    buffer = io.BytesIO()
    flambeau.save(module, buffer)
    buffer.seek(0)
    return flambeau.load(buffer, weights_only=False)


def test_deepcopy_of_a_module_pruned_without_grad():
    # As in PyTorch, `weight` must be a graph leaf to be deep-copied.
    with flambeau.no_grad():
        layer = prune.l1_unstructured(linear(), "weight", amount=2)
    clone = copy.deepcopy(layer)
    assert prune.is_pruned(clone) and clone.weight_orig is not layer.weight_orig
    prune.remove(clone, "weight")
    assert prune.is_pruned(layer)
    np.testing.assert_array_equal(np_of(clone.weight), np_of(layer.weight))


def test_state_dict_loads_into_a_pruned_module():
    source = prune.l1_unstructured(linear(), "weight", amount=2)
    target = prune.identity(nn.Linear(3, 2), "weight")
    target.load_state_dict(source.state_dict())
    target(flambeau.ones(1, 3))
    np.testing.assert_array_equal(np_of(target.weight), np_of(source.weight))


# ---- PyTorch as an oracle ----------------------------------------------------------------


def torch_and_flambeau_linear(torch, weight):
    t_layer = torch.nn.Linear(len(weight[0]), len(weight))
    with torch.no_grad():
        t_layer.weight.copy_(torch.tensor(weight, dtype=torch.float32))
    return t_layer, linear(weight)


ORACLE_STEPS = [
    [("l1_unstructured", {"amount": 3})],
    [("l1_unstructured", {"amount": 0.3}), ("l1_unstructured", {"amount": 0.5})],
    [("ln_structured", {"amount": 1, "n": 2, "dim": 0})],
    [("ln_structured", {"amount": 2, "n": 1, "dim": -1})],
    [("ln_structured", {"amount": 0.4, "n": -math.inf, "dim": 1})],
    [
        ("l1_unstructured", {"amount": 2}),
        ("ln_structured", {"amount": 1, "n": math.inf, "dim": 0}),
        ("l1_unstructured", {"amount": 0.25}),
    ],
    [("ln_structured", {"amount": 1, "n": 2, "dim": 1}), ("l1_unstructured", {"amount": 4})],
]


@pytest.mark.parametrize("steps", ORACLE_STEPS)
def test_masks_match_pytorch(steps):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    rng = np.random.default_rng(len(steps))
    # Distinct powers of two: the magnitudes and every channel's Ln norm differ.
    exponents = rng.permutation(20).reshape(4, 5) - 10.0
    weight = (2.0**exponents * rng.choice([-1.0, 1.0], (4, 5))).tolist()
    t_layer, f_layer = torch_and_flambeau_linear(torch, weight)
    for fn, kwargs in steps:
        getattr(torch_prune, fn)(t_layer, "weight", **kwargs)
        getattr(prune, fn)(f_layer, "weight", **kwargs)
        np.testing.assert_array_equal(
            np_of(f_layer.weight_mask), t_layer.weight_mask.detach().numpy()
        )
    assert list(f_layer.state_dict()) == list(t_layer.state_dict())
    torch_prune.remove(t_layer, "weight")
    prune.remove(f_layer, "weight")
    np.testing.assert_array_equal(np_of(f_layer.weight), t_layer.weight.detach().numpy())


def test_global_masks_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    weights = [[[0.3, -2.0, 0.7], [1.1, -0.05, 0.9]], [[-0.4, 0.2], [3.0, -0.6]]]
    t_layers, f_layers = zip(*(torch_and_flambeau_linear(torch, w) for w in weights))
    torch_prune.l1_unstructured(t_layers[0], "weight", amount=1)
    prune.l1_unstructured(f_layers[0], "weight", amount=1)
    for layers, module in ((t_layers, torch_prune), (f_layers, prune)):
        module.global_unstructured(
            [(m, "weight") for m in layers], pruning_method=module.L1Unstructured, amount=0.4
        )
    for t_layer, f_layer in zip(t_layers, f_layers):
        np.testing.assert_array_equal(
            np_of(f_layer.weight_mask), t_layer.weight_mask.detach().numpy()
        )


@pytest.mark.parametrize(
    ("build", "args"),
    [
        ("L1Unstructured", (-2,)),
        ("L1Unstructured", (1.01,)),
        ("RandomUnstructured", ("a",)),
        ("LnStructured", (None, 2)),
    ],
)
def test_argument_errors_match_pytorch(build, args):
    pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    with pytest.raises(Exception) as expected:
        getattr(torch_prune, build)(*args)
    with pytest.raises(type(expected.value)) as got:
        getattr(prune, build)(*args)
    assert str(got.value) == str(expected.value)


def test_count_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    t_layer, f_layer = torch_and_flambeau_linear(torch, WEIGHT)
    for fn, kwargs in [
        ("l1_unstructured", {"amount": 9}),
        ("random_structured", {"amount": 4, "dim": 0}),
    ]:
        with pytest.raises(ValueError) as expected:
            getattr(torch_prune, fn)(t_layer, "weight", **kwargs)
        with pytest.raises(ValueError) as got:
            getattr(prune, fn)(f_layer, "weight", **kwargs)
        assert str(got.value) == str(expected.value)
    with pytest.raises(IndexError) as expected:
        torch_prune.ln_structured(t_layer, "weight", amount=1, n=2, dim=3)
    with pytest.raises(IndexError) as got:
        prune.ln_structured(f_layer, "weight", amount=1, n=2, dim=3)
    assert str(got.value) == str(expected.value).replace("torch.Size", "flambeau.Size")
