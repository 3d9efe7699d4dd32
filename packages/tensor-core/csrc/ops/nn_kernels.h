// Kernel signatures of the nn operators that are not elementwise, shared by
// their frontends (csrc/ops/nn_*.cpp) and every backend (csrc/cpu/nn_*.cpp).
// Frontends hand kernels contiguous tensors of one floating dtype.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace flambeau {

// Softmax over the middle dim of in viewed as (outer, n, inner); log picks
// log_softmax.
// SoftmaxKernel: declared in kernels/table.yaml.
// grad_input from grad_output and the forward's output, same layout.
// SoftmaxBackwardKernel: declared in kernels/table.yaml.

// Layer norm over rows of n elements: out = (x - mean) * rstd * w + b, with
// mean and rstd (rows elements, x's dtype) written out. weight/bias (n
// elements) may be null. Group norm uses it for its statistics too.
// LayerNormKernel: declared in kernels/table.yaml.
// Any of grad_input, grad_weight, grad_bias may be null (not wanted).
// LayerNormBackwardKernel: declared in kernels/table.yaml.

// nll over (N, C, D) log-probabilities and (N, D) int64 targets; weight (C) may
// be null. Writes per-element losses (reduction none, N*D elements) or the
// weighted sum into out and the counted weight into total_weight.
// NllLossKernel: declared in kernels/table.yaml.
// grad_input (N, C, D, zeroed by the kernel) from grad_output (N*D elements for
// reduction none, else one, already divided by total_weight for mean).
// NllLossBackwardKernel: declared in kernels/table.yaml.

// out (M, D) = rows of weight (W, D) picked by indices (M int64, in range).
// EmbeddingKernel: declared in kernels/table.yaml.
// out (B, D) = bags of weight rows; bag b covers indices [starts[b], starts[b + 1])
// (starts: B + 1 int64). mode 0 sum (times psw when given), 1 mean, 2 max; indices
// equal to padding_idx are skipped. Fills offset2bag (M), bag_size (B) and, for
// max, max_indices (B, D; -1 for empty bags).
// EmbeddingBagKernel: declared in kernels/table.yaml.
// grad_weight (W, D, zeroed) gets, for each index i (skipping padding_idx):
// grad[bag(i)] * psw[i] (mode 0) or / bag_size[bag(i)] (mode 1), divided by the
// index's frequency when scale_grad_by_freq; bag(i) = offset2bag[i], or i when
// offset2bag is null. Mode 2: grad[b, d] goes to row max_indices[b, d].
// EmbeddingBackwardKernel: declared in kernels/table.yaml.

}  // namespace flambeau
