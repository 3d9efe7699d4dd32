// Frontends of _rnn_layer and its backward: one recurrent layer (one direction)
// over a whole sequence. They check the layer's geometry once (shared by both),
// make the inputs contiguous and allocate the outputs; the kernels are in
// cpu/nn_rnn_layer_kernels.cpp.
#include <utility>

#include "generated/kernels.h"
#include "generated/ops_nn_rnn.h"
#include "generated/ops_tensor.h"
#include "ops/rnn_kernels.h"

namespace flambeau {

namespace {

Tensor dense(const Tensor& t) { return t ? ops::contiguous(t) : t; }

RnnMode parse_mode(const char* op, const std::string& mode) {
  if (mode == "LSTM") return RnnMode::Lstm;
  if (mode == "GRU") return RnnMode::Gru;
  if (mode == "RNN_TANH") return RnnMode::Tanh;
  if (mode == "RNN_RELU") return RnnMode::Relu;
  fail<ValueError>(op, ": unknown mode '", mode, "' (expected LSTM, GRU, RNN_TANH or RNN_RELU)");
}

void check_shape(const char* op, const char* what, const Tensor& t, const DimVector& expected) {
  FLB_CHECK(t->sizes() == IntList(expected), op, ": expected ", what, " of shape ",
            shape_str(expected), ", got ", shape_str(t->sizes()));
}

// The layer's geometry from the forward's arguments, every argument checked against it.
RnnLayerShape layer_shape(const char* op, const Tensor& input, const Tensor& hx, const Tensor& cx,
                          const RnnLayerWeights& w, IntList batch_sizes, const std::string& mode,
                          bool reverse) {
  RnnLayerShape s;
  s.mode = parse_mode(op, mode);
  s.reverse = reverse;
  const bool lstm = s.mode == RnnMode::Lstm;
  const int k = lstm ? 4 : s.mode == RnnMode::Gru ? 3 : 1;

  const ScalarType dt = input->dtype();
  FLB_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, op,
            ": expected float32 or float64 tensors, got ", dtype_name(dt));
  for (const Tensor* t : {&hx, &cx, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh, &w.w_hr})
    if (*t)
      FLB_CHECK((*t)->dtype() == dt, op, ": expected all tensors to be ", dtype_name(dt), ", got ",
                dtype_name((*t)->dtype()));
  common_device({&input, &hx, &cx, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh, &w.w_hr}, op);

  if (batch_sizes.empty()) {  // padded: (steps, batch, input_size)
    FLB_CHECK(input->dim() == 3, op, ": expected a 3-D input (steps, batch, input_size) ",
              "without batch_sizes, got shape ", shape_str(input->sizes()));
    s.batch_sizes.assign(static_cast<size_t>(input->sizes()[0]), input->sizes()[1]);
    s.batch = input->sizes()[1];
    s.rows = input->sizes()[0] * input->sizes()[1];
  } else {  // packed: (sum of batch_sizes, input_size)
    FLB_CHECK(input->dim() == 2, op, ": expected a 2-D packed input (rows, input_size) with ",
              "batch_sizes, got shape ", shape_str(input->sizes()));
    int64_t rows = 0, previous = batch_sizes[0];
    for (int64_t b : batch_sizes) {
      FLB_CHECK(b > 0 && b <= previous, op, ": batch_sizes must be positive and non-increasing, ",
                "got ", shape_str(batch_sizes));
      previous = b;
      rows += b;
    }
    FLB_CHECK(rows == input->sizes()[0], op, ": batch_sizes sum to ", rows, " but the input has ",
              input->sizes()[0], " rows");
    s.batch_sizes.assign(batch_sizes.begin(), batch_sizes.end());
    s.batch = batch_sizes[0];
    s.rows = rows;
  }
  s.input_size = input->sizes()[input->dim() - 1];

  FLB_CHECK(w.w_ih->dim() == 2 && w.w_hh->dim() == 2, op,
            ": expected 2-D weight_ih and weight_hh, got shapes ", shape_str(w.w_ih->sizes()),
            " and ", shape_str(w.w_hh->sizes()));
  s.gates = w.w_ih->sizes()[0];
  FLB_CHECK(s.gates % k == 0, op, ": weight_ih has ", s.gates, " rows, not a multiple of the ", k,
            " gates of ", mode);
  s.hidden = s.gates / k;
  FLB_CHECK(!w.w_hr || lstm, op, ": weight_hr (a projection) is only supported for LSTM");
  s.out_size = w.w_hr ? w.w_hr->sizes()[0] : s.hidden;
  check_shape(op, "weight_ih", w.w_ih, {s.gates, s.input_size});
  check_shape(op, "weight_hh", w.w_hh, {s.gates, s.out_size});
  if (w.w_hr) check_shape(op, "weight_hr", w.w_hr, {s.out_size, s.hidden});
  FLB_CHECK(!w.b_ih == !w.b_hh, op, ": expected both biases or neither");
  if (w.b_ih) {
    check_shape(op, "bias_ih", w.b_ih, {s.gates});
    check_shape(op, "bias_hh", w.b_hh, {s.gates});
  }
  check_shape(op, "hx", hx, {s.batch, s.out_size});
  FLB_CHECK(!lstm || cx, op, ": LSTM needs a cell state cx");
  FLB_CHECK(lstm || !cx, op, ": only LSTM takes a cell state cx");
  if (lstm) check_shape(op, "cx", cx, {s.batch, s.hidden});
  s.ws_cols = lstm ? (w.w_hr ? 6 : 5) * s.hidden : s.mode == RnnMode::Gru ? 4 * s.hidden : 0;
  return s;
}

// The weights made contiguous and the layer's geometry, checked: what both frontends start
// from.
std::pair<RnnLayerWeights, RnnLayerShape> checked_layer(
    const char* op, const Tensor& input, const Tensor& hx, const Tensor& cx,
    const Tensor& weight_ih, const Tensor& weight_hh, const Tensor& bias_ih, const Tensor& bias_hh,
    const Tensor& weight_hr, IntList batch_sizes, const std::string& mode, bool reverse) {
  RnnLayerWeights w{dense(weight_ih), dense(weight_hh), dense(bias_ih), dense(bias_hh),
                    dense(weight_hr)};
  RnnLayerShape s = layer_shape(op, input, hx, cx, w, batch_sizes, mode, reverse);
  return {std::move(w), std::move(s)};
}

DimVector output_shape(const RnnLayerShape& s, const Tensor& input) {
  if (input->dim() == 2) return {s.rows, s.out_size};
  return {input->sizes()[0], s.batch, s.out_size};
}

}  // namespace

namespace ops {

std::tuple<Tensor, Tensor, Tensor, Tensor> _rnn_layer(const Tensor& input, const Tensor& hx,
                                                      const Tensor& cx, const Tensor& weight_ih,
                                                      const Tensor& weight_hh,
                                                      const Tensor& bias_ih, const Tensor& bias_hh,
                                                      const Tensor& weight_hr, IntList batch_sizes,
                                                      const std::string& mode, bool reverse) {
  const char* op_name = "_rnn_layer";
  const auto [w, s] = checked_layer(op_name, input, hx, cx, weight_ih, weight_hh, bias_ih, bias_hh,
                                    weight_hr, batch_sizes, mode, reverse);
  const ScalarType dt = input->dtype();
  const Device dev = input->device();
  Tensor output = flambeau::empty(output_shape(s, input), dt, dev);
  Tensor hy = flambeau::empty(DimVector{s.batch, s.out_size}, dt, dev);
  Tensor cy = flambeau::empty(cx ? DimVector{s.batch, s.hidden} : DimVector{0}, dt, dev);
  Tensor workspace = flambeau::empty(DimVector{s.rows, s.ws_cols}, dt, dev);
  kernel<kernels::_rnn_layer>(dev)(s, dense(input), dense(hx), dense(cx), w, output, hy, cy,
                                   workspace);
  return {output, hy, cy, workspace};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> _rnn_layer_backward(
    const Tensor& grad_output, const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& input,
    const Tensor& hx, const Tensor& cx, const Tensor& weight_ih, const Tensor& weight_hh,
    const Tensor& bias_ih, const Tensor& bias_hh, const Tensor& weight_hr, const Tensor& output,
    const Tensor& workspace, IntList batch_sizes, const std::string& mode, bool reverse) {
  const char* op_name = "_rnn_layer_backward";
  const auto [w, s] = checked_layer(op_name, input, hx, cx, weight_ih, weight_hh, bias_ih, bias_hh,
                                    weight_hr, batch_sizes, mode, reverse);
  const ScalarType dt = input->dtype();
  const Device dev = input->device();
  const DimVector out_shape = output_shape(s, input);
  for (const Tensor* t : {&grad_output, &grad_hy, &grad_cy, &output, &workspace})
    if (*t)
      FLB_CHECK((*t)->dtype() == dt, op_name, ": expected all tensors to be ", dtype_name(dt),
                ", got ", dtype_name((*t)->dtype()));
  common_device({&input, &grad_output, &grad_hy, &grad_cy, &output, &workspace}, op_name);
  check_shape(op_name, "output", output, out_shape);
  check_shape(op_name, "workspace", workspace, {s.rows, s.ws_cols});
  if (grad_output) check_shape(op_name, "grad_output", grad_output, out_shape);
  if (grad_hy) check_shape(op_name, "grad_hy", grad_hy, {s.batch, s.out_size});
  FLB_CHECK(!grad_cy || cx, op_name, ": grad_cy is given but ", mode, " has no cell state");
  if (grad_cy) check_shape(op_name, "grad_cy", grad_cy, {s.batch, s.hidden});

  auto like = [&](const Tensor& t) {
    return t ? flambeau::empty(t->sizes(), dt, dev) : flambeau::empty(DimVector{0}, dt, dev);
  };
  const RnnLayerGrads grads{like(input),     like(hx),      like(cx),      like(weight_ih),
                            like(weight_hh), like(bias_ih), like(bias_hh), like(weight_hr)};
  RnnLayerGrads to_fill = grads;  // the kernel leaves what is absent undefined
  if (!cx) to_fill.cx = Tensor();
  if (!bias_ih) to_fill.b_ih = to_fill.b_hh = Tensor();
  if (!weight_hr) to_fill.w_hr = Tensor();
  kernel<kernels::_rnn_layer_backward>(dev)(s, dense(grad_output), dense(grad_hy), dense(grad_cy),
                                            dense(input), dense(hx), dense(cx), w, dense(output),
                                            dense(workspace), to_fill);
  return {grads.input, grads.hx,   grads.cx,   grads.w_ih,
          grads.w_hh,  grads.b_ih, grads.b_hh, grads.w_hr};
}

}  // namespace ops
}  // namespace flambeau
