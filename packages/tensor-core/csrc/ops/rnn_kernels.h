// Kernel signatures of the fused recurrent cells (ops/nn_rnn.yaml). Every
// tensor is contiguous and of one floating dtype; gates are batch x k*hidden
// with the chunks side by side; a missing bias is an undefined tensor.
#pragma once
#include "core/tensor.h"

namespace flambeau {

using LstmCellKernel = void(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& cx,
                            const Tensor& input_bias, const Tensor& hidden_bias, const Tensor& hy,
                            const Tensor& cy, const Tensor& workspace);
// grad_hy and grad_cy may be undefined (no gradient flows from that output).
using LstmCellBackwardKernel = void(const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& cx,
                                    const Tensor& cy, const Tensor& workspace,
                                    const Tensor& grad_gates, const Tensor& grad_cx);
using GruCellKernel = void(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx,
                           const Tensor& input_bias, const Tensor& hidden_bias, const Tensor& hy,
                           const Tensor& workspace);
using GruCellBackwardKernel = void(const Tensor& grad_hy, const Tensor& workspace,
                                   const Tensor& grad_input_gates, const Tensor& grad_hidden_gates,
                                   const Tensor& grad_hx);

}  // namespace flambeau
