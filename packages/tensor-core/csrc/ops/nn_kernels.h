// Kernel signatures of the nn operators that are not elementwise, shared by
// their frontends (csrc/ops/nn_*.cpp) and every backend (csrc/cpu/nn_*.cpp).
// Frontends hand kernels contiguous tensors of one floating dtype.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace flambeau {

// Softmax over the middle dim of in viewed as (outer, n, inner); log picks
// log_softmax.
using SoftmaxKernel = void(const Tensor& out, const Tensor& in, int64_t outer, int64_t n,
                           int64_t inner, bool log);
// grad_input from grad_output and the forward's output, same layout.
using SoftmaxBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_output,
                                   const Tensor& output, int64_t outer, int64_t n, int64_t inner,
                                   bool log);

// Layer norm over rows of n elements: out = (x - mean) * rstd * w + b, with
// mean and rstd (rows elements, x's dtype) written out. weight/bias (n
// elements) may be null. Group norm uses it for its statistics too.
using LayerNormKernel = void(const Tensor& out, const Tensor& mean, const Tensor& rstd,
                             const Tensor& x, const Tensor& weight, const Tensor& bias,
                             int64_t rows, int64_t n, double eps);
// Any of grad_input, grad_weight, grad_bias may be null (not wanted).
using LayerNormBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_weight,
                                     const Tensor& grad_bias, const Tensor& grad_out,
                                     const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                     const Tensor& weight, int64_t rows, int64_t n);

// nll over (N, C, D) log-probabilities and (N, D) int64 targets; weight (C) may
// be null. Writes per-element losses (reduction none, N*D elements) or the
// weighted sum into out and the counted weight into total_weight.
using NllLossKernel = void(const Tensor& out, const Tensor& total_weight, const Tensor& input,
                           const Tensor& target, const Tensor& weight, int64_t N, int64_t C,
                           int64_t D, int64_t reduction, int64_t ignore_index);
// grad_input (N, C, D, zeroed by the kernel) from grad_output (N*D elements for
// reduction none, else one, already divided by total_weight for mean).
using NllLossBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_output,
                                   const Tensor& target, const Tensor& weight, int64_t N, int64_t C,
                                   int64_t D, int64_t reduction, int64_t ignore_index);

// out (M, D) = rows of weight (W, D) picked by indices (M int64, in range).
using EmbeddingKernel = void(const Tensor& out, const Tensor& weight, const Tensor& indices);
// out (B, D) = bags of weight rows; bag b covers indices [starts[b], starts[b + 1])
// (starts: B + 1 int64). mode 0 sum (times psw when given), 1 mean, 2 max; indices
// equal to padding_idx are skipped. Fills offset2bag (M), bag_size (B) and, for
// max, max_indices (B, D; -1 for empty bags).
using EmbeddingBagKernel = void(const Tensor& out, const Tensor& offset2bag, const Tensor& bag_size,
                                const Tensor& max_indices, const Tensor& weight,
                                const Tensor& indices, const Tensor& starts, int64_t mode,
                                const Tensor& psw, int64_t padding_idx);
// grad_weight (W, D, zeroed) gets, for each index i (skipping padding_idx):
// grad[bag(i)] * psw[i] (mode 0) or / bag_size[bag(i)] (mode 1), divided by the
// index's frequency when scale_grad_by_freq; bag(i) = offset2bag[i], or i when
// offset2bag is null. Mode 2: grad[b, d] goes to row max_indices[b, d].
using EmbeddingBackwardKernel = void(const Tensor& grad_weight, const Tensor& grad,
                                     const Tensor& indices, const Tensor& offset2bag,
                                     const Tensor& bag_size, const Tensor& max_indices,
                                     const Tensor& psw, int64_t mode, bool scale_grad_by_freq,
                                     int64_t padding_idx);

}  // namespace flambeau
