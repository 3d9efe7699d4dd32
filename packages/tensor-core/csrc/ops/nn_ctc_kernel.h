// Kernel signatures of the CTC loss, shared by csrc/ops/nn_ctc.cpp and every
// backend. log_probs is contiguous (T, N, C) float32/float64; targets a flat
// contiguous int64 tensor where sample b's labels start at offsets[b]; offsets,
// input_lengths and target_lengths are contiguous int64 (N), already checked.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace flambeau {

// nll (N) and log_alpha (N, T, 2 S + 1), the latter filled with -inf by the
// frontend; the kernel writes alpha[b, t, s] for t < input_lengths[b] and
// s <= 2 target_lengths[b].
using CtcLossKernel = void(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs,
                           const Tensor& targets, const Tensor& offsets,
                           const Tensor& input_lengths, const Tensor& target_lengths,
                           int64_t blank);
// grad (T, N, C) from grad_out (N) and the forward's nll and log_alpha.
using CtcLossBackwardKernel = void(const Tensor& grad, const Tensor& grad_out,
                                   const Tensor& log_probs, const Tensor& targets,
                                   const Tensor& offsets, const Tensor& input_lengths,
                                   const Tensor& target_lengths, const Tensor& nll,
                                   const Tensor& log_alpha, int64_t blank, bool zero_infinity);

}  // namespace flambeau
