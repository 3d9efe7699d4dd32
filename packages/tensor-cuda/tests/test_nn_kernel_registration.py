"""The nn group's CUDA kernels (reductions, triangles, ranges, convolution, resampling,
attention, recurrent cells and layers, the CTC loss) are registered when the plugin is
imported, with no GPU needed: the core then dispatches those operators to cuda instead of
raising NotImplementedError (tests/gpu/ checks their results on a device)."""

from __future__ import annotations

from test_plugin import cuda_kernels

NN_KERNELS = [
    "all",
    "any",
    "count_nonzero",
    "nansum",
    "nanmean",
    "norm",
    "logsumexp",
    "var",
    "tril",
    "triu",
    "arange",
    "linspace",
    "logspace",
    "conv_forward",
    "conv_backward_input",
    "conv_backward_weight",
    "conv_backward_bias",
    "resample",
    "resample_backward",
    "_scaled_dot_product_attention_forward",
    "_scaled_dot_product_attention_backward",
    "_thnn_fused_lstm_cell",
    "_thnn_fused_lstm_cell_backward",
    "_thnn_fused_gru_cell",
    "_thnn_fused_gru_cell_backward",
    "_rnn_layer",
    "_rnn_layer_backward",
    # data-sized results, counted first (mask_select_ops.cu)
    "_nonzero_count",
    "nonzero",
    "masked_select",
    # the CTC loss (ctc_ops.cu)
    "_ctc_loss",
    "_ctc_loss_backward",
]


def test_nn_kernels_are_registered_for_cuda(install_dir):  # noqa: F811
    out = cuda_kernels(install_dir)
    missing = sorted(set(NN_KERNELS) - out)
    assert not missing, missing
