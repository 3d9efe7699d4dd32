// Frontends of the fused recurrent cells: shape and dtype checks, contiguous
// inputs, outputs allocated here, bias gradients as sums over the batch.
#include "generated/kernels.h"
#include "generated/ops_nn_rnn.h"
#include "generated/ops_reduction.h"
#include "generated/ops_tensor.h"
#include "ops/rnn_kernels.h"

namespace flambeau {

namespace {

Tensor dense(const Tensor& t) { return t ? ops::contiguous(t) : t; }

// Checks gates (batch x k*hidden) against a state (batch x hidden) and biases (k*hidden).
void check_cell(const char* op, int k, const Tensor& input_gates, const Tensor& hidden_gates,
                const Tensor& state, const Tensor& input_bias, const Tensor& hidden_bias) {
  FLB_CHECK(state->dim() == 2, op, ": expected a 2-D state (batch, hidden), got shape ",
            shape_str(state->sizes()));
  const int64_t batch = state->sizes()[0], hidden = state->sizes()[1];
  const DimVector gates{batch, k * hidden};
  for (const Tensor* g : {&input_gates, &hidden_gates})
    FLB_CHECK((*g)->sizes() == IntList(gates), op, ": expected gates of shape ", shape_str(gates),
              " for a state of shape ", shape_str(state->sizes()), ", got ",
              shape_str((*g)->sizes()));
  for (const Tensor* b : {&input_bias, &hidden_bias})
    if (*b)
      FLB_CHECK((*b)->sizes() == IntList(DimVector{k * hidden}), op, ": expected a bias of shape (",
                k * hidden, "), got ", shape_str((*b)->sizes()));
  const ScalarType dt = state->dtype();
  FLB_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, op,
            ": expected float32 or float64 tensors, got ", dtype_name(dt));
  for (const Tensor* t : {&input_gates, &hidden_gates, &input_bias, &hidden_bias})
    if (*t)
      FLB_CHECK((*t)->dtype() == dt, op, ": expected all tensors to be ", dtype_name(dt), ", got ",
                dtype_name((*t)->dtype()));
}

Tensor bias_grad(const Tensor& grad_gates, bool has_bias) {
  if (!has_bias) return flambeau::empty(DimVector{0}, grad_gates->dtype(), grad_gates->device());
  return ops::sum(grad_gates, DimVector{0}, false, std::nullopt, OutArg::none());
}

}  // namespace

namespace ops {

std::tuple<Tensor, Tensor, Tensor> _thnn_fused_lstm_cell(const Tensor& input_gates,
                                                         const Tensor& hidden_gates,
                                                         const Tensor& cx, const Tensor& input_bias,
                                                         const Tensor& hidden_bias) {
  check_cell("_thnn_fused_lstm_cell", 4, input_gates, hidden_gates, cx, input_bias, hidden_bias);
  Tensor hy = flambeau::empty(cx->sizes(), cx->dtype(), cx->device());
  Tensor cy = flambeau::empty(cx->sizes(), cx->dtype(), cx->device());
  Tensor workspace = flambeau::empty(input_gates->sizes(), cx->dtype(), cx->device());
  kernel<kernels::_thnn_fused_lstm_cell>(cx->device())(dense(input_gates), dense(hidden_gates),
                                                       dense(cx), dense(input_bias),
                                                       dense(hidden_bias), hy, cy, workspace);
  return {hy, cy, workspace};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> _thnn_fused_lstm_cell_backward(
    const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& cx, const Tensor& cy,
    const Tensor& workspace, bool has_bias) {
  check_cell("_thnn_fused_lstm_cell_backward", 4, workspace, workspace, cx, Tensor(), Tensor());
  for (const Tensor* t : {&grad_hy, &grad_cy, &cy})
    if (*t)
      FLB_CHECK((*t)->sizes() == cx->sizes() && (*t)->dtype() == cx->dtype(),
                "_thnn_fused_lstm_cell_backward: expected ", shape_str(cx->sizes()), " ",
                dtype_name(cx->dtype()), " gradients and cell state, got ",
                shape_str((*t)->sizes()), " ", dtype_name((*t)->dtype()));
  Tensor grad_gates = flambeau::empty(workspace->sizes(), cx->dtype(), cx->device());
  Tensor grad_cx = flambeau::empty(cx->sizes(), cx->dtype(), cx->device());
  kernel<kernels::_thnn_fused_lstm_cell_backward>(cx->device())(
      dense(grad_hy), dense(grad_cy), dense(cx), dense(cy), dense(workspace), grad_gates, grad_cx);
  Tensor db = bias_grad(grad_gates, has_bias);
  return {grad_gates, grad_gates, grad_cx, db, db};
}

std::tuple<Tensor, Tensor> _thnn_fused_gru_cell(const Tensor& input_gates,
                                                const Tensor& hidden_gates, const Tensor& hx,
                                                const Tensor& input_bias,
                                                const Tensor& hidden_bias) {
  check_cell("_thnn_fused_gru_cell", 3, input_gates, hidden_gates, hx, input_bias, hidden_bias);
  Tensor hy = flambeau::empty(hx->sizes(), hx->dtype(), hx->device());
  Tensor workspace =
      flambeau::empty(DimVector{hx->sizes()[0], 5 * hx->sizes()[1]}, hx->dtype(), hx->device());
  kernel<kernels::_thnn_fused_gru_cell>(hx->device())(dense(input_gates), dense(hidden_gates),
                                                      dense(hx), dense(input_bias),
                                                      dense(hidden_bias), hy, workspace);
  return {hy, workspace};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> _thnn_fused_gru_cell_backward(
    const Tensor& grad_hy, const Tensor& workspace, bool has_bias) {
  const char* op_name = "_thnn_fused_gru_cell_backward";
  FLB_CHECK(grad_hy->dim() == 2, op_name, ": expected a 2-D gradient, got shape ",
            shape_str(grad_hy->sizes()));
  const int64_t batch = grad_hy->sizes()[0], hidden = grad_hy->sizes()[1];
  FLB_CHECK(workspace->sizes() == IntList(DimVector{batch, 5 * hidden}) &&
                workspace->dtype() == grad_hy->dtype(),
            op_name, ": expected a workspace of shape ", shape_str(DimVector{batch, 5 * hidden}),
            ", got ", shape_str(workspace->sizes()));
  check_cell(op_name, 3, flambeau::empty(DimVector{batch, 3 * hidden}, grad_hy->dtype()),
             flambeau::empty(DimVector{batch, 3 * hidden}, grad_hy->dtype()), grad_hy, Tensor(),
             Tensor());
  DimVector gates{batch, 3 * hidden};
  Tensor grad_input = flambeau::empty(gates, grad_hy->dtype(), grad_hy->device());
  Tensor grad_hidden = flambeau::empty(gates, grad_hy->dtype(), grad_hy->device());
  Tensor grad_hx = flambeau::empty(grad_hy->sizes(), grad_hy->dtype(), grad_hy->device());
  kernel<kernels::_thnn_fused_gru_cell_backward>(grad_hy->device())(
      dense(grad_hy), dense(workspace), grad_input, grad_hidden, grad_hx);
  return {grad_input, grad_hidden, grad_hx, bias_grad(grad_input, has_bias),
          bias_grad(grad_hidden, has_bias)};
}

}  // namespace ops
}  // namespace flambeau
