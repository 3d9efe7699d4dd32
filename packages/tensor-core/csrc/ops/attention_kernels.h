// Kernel interface of scaled dot-product attention (ops/nn_attention.yaml).
// The frontend flattens the broadcast batch dims (heads included) into `count`
// problems; each input is addressed through a table of per-problem element
// offsets, so broadcast inputs and the key/value heads that grouped-query
// attention shares are never copied.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace flambeau {

struct AttentionProblem {
  int64_t count = 0;
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  // q, k, v: the compute dtype (float32 or float64), last dim contiguous; rows
  // ld elements apart; off tables have count entries.
  Tensor q, k, v;
  int64_t q_ld = 0, k_ld = 0, v_ld = 0;
  std::vector<int64_t> q_off, k_off, v_off;
  // Optional mask: bool (true takes part) or the compute dtype (added), read
  // through mask_off and its row/column strides.
  Tensor mask;
  std::vector<int64_t> mask_off;
  int64_t mask_row = 0, mask_col = 0;
  double scale = 1;
  bool causal = false;
  double dropout_p = 0;
  // Dropout keeps element (i, l, s) when Philox lane (i * L + l) * S + s of the
  // stream (seed, offset) is below 1 - dropout_p, as bernoulli_ draws them.
  uint64_t seed = 0, offset = 0;
};

// out (count, L, Ev) and logsumexp (count, L): contiguous, compute dtype.
// AttentionForwardKernel: declared in kernels/table.yaml.
// grad_out, out: (count, L, Ev) and logsumexp (count, L), contiguous. Writes
// grad_q (count, L, E), grad_k (count, S, E), grad_v (count, S, Ev), one per
// problem (the frontend sums those that share an input).
// AttentionBackwardKernel: declared in kernels/table.yaml.

}  // namespace flambeau
