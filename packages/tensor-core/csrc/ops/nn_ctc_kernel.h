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
// CtcLossKernel: declared in kernels/table.yaml.
// grad (T, N, C) from grad_out (N) and the forward's nll and log_alpha.
// CtcLossBackwardKernel: declared in kernels/table.yaml.

}  // namespace flambeau
