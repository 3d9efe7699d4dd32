"""flambeau.nn.attention.bias (torch.nn.attention.bias): causal biases as
scaled_dot_product_attention's attn_mask, equal to the masks they stand for."""

import warnings

import pytest

import flambeau
import flambeau.nn.functional as F
from flambeau.nn.attention import bias
from flambeau.nn.attention.bias import (
    CausalBias,
    CausalVariant,
    causal_lower_right,
    causal_upper_left,
)


def test_namespace():
    assert bias.__all__ == [
        "causal_upper_left",
        "causal_lower_right",
        "CausalVariant",
        "CausalBias",
    ]
    assert flambeau.nn.attention.bias is bias


def test_variants():
    assert [(v.name, int(v)) for v in CausalVariant] == [("UPPER_LEFT", 1), ("LOWER_RIGHT", 2)]


def test_masks_are_the_triangles():
    upper = causal_upper_left(3, 4)
    assert isinstance(upper, CausalBias) and isinstance(upper, flambeau.Tensor)
    assert (upper.variant, upper.seq_len_q, upper.seq_len_kv) == (CausalVariant.UPPER_LEFT, 3, 4)
    assert upper._materialize().tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, True, False],
    ]
    lower = causal_lower_right(3, 4)
    assert lower._materialize().tolist() == [
        [True, True, False, False],
        [True, True, True, False],
        [True, True, True, True],
    ]
    assert repr(lower) == str(lower) == repr(lower._materialize())
    assert lower._materialize().dtype == flambeau.bool
    # As in PyTorch, the tensor itself is a placeholder of shape (variant, L, S).
    assert tuple(lower.shape) == (2, 3, 4) and tuple(upper.shape) == (1, 3, 4)


def test_construction_errors_and_the_nan_warning():
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(3)
    with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
        causal_lower_right(1, 2, 3)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        CausalBias(1, 2, 3)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs in the "
                      "output when seq_len_q > seq_len_kv!"):  # fmt: skip
        causal_lower_right(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        causal_upper_left(4, 3)
        causal_lower_right(3, 3)


@pytest.mark.parametrize("seq_q, seq_kv", [(3, 5), (4, 4), (5, 5)])
def test_attention_equals_the_explicit_mask(seq_q, seq_kv):
    q, k, v = (
        flambeau.randn(2, 3, seq_q, 8),
        flambeau.randn(2, 3, seq_kv, 8),
        flambeau.randn(2, 3, seq_kv, 8),
    )
    for make in (causal_upper_left, causal_lower_right):
        attn_bias = make(seq_q, seq_kv)
        out = F.scaled_dot_product_attention(q, k, v, attn_bias)
        assert type(out) is flambeau.Tensor
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias._materialize())
        flambeau.testing.assert_close(out, expected)
        keyword = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias, scale=0.5)
        flambeau.testing.assert_close(
            keyword,
            F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias._materialize(), scale=0.5),
        )
    upper = F.scaled_dot_product_attention(q, k, v, causal_upper_left(seq_q, seq_kv))
    flambeau.testing.assert_close(upper, F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_errors_in_attention():
    q = flambeau.randn(1, 1, 2, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(q, q, q, causal_upper_left(2, 2), is_causal=True)
    kv = flambeau.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q.double(), kv, kv, causal_lower_right(2, 3))


def test_grad_flows_through_a_biased_attention():
    q = flambeau.randn(1, 1, 2, 4, requires_grad=True)
    kv = flambeau.randn(1, 1, 3, 4, requires_grad=True)
    F.scaled_dot_product_attention(q, kv, kv, causal_lower_right(2, 3)).sum().backward()
    assert q.grad is not None and kv.grad is not None


def test_other_functions_see_the_placeholder_tensor():
    attn_bias = causal_lower_right(2, 3)
    assert attn_bias.dim() == 3 and attn_bias.numel() == 12
