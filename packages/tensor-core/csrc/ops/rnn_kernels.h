// Kernel signatures of the fused recurrent cells and layers (ops/nn_rnn.yaml).
// Every tensor is contiguous and of one floating dtype; gates are batch x k*hidden
// with the chunks side by side; a missing bias is an undefined tensor.
#pragma once
#include "core/tensor.h"
#include "generated/kernel_signatures.h"

namespace flambeau {

// LstmCellKernel: declared in kernels/table.yaml.
// grad_hy and grad_cy may be undefined (no gradient flows from that output).
// LstmCellBackwardKernel: declared in kernels/table.yaml.
// GruCellKernel: declared in kernels/table.yaml.
// GruCellBackwardKernel: declared in kernels/table.yaml.

// ---- A whole layer (one direction) over a sequence: _rnn_layer ----

// RnnMode: declared in kernels/table.yaml.

// What the frontend checked: the layer's sizes and the packed sequence's steps.
// The input's rows are the time steps' batches one after another (batch_sizes[t]
// rows at step t, non-increasing); a padded (T, B, I) input is the packed one
// whose every step holds B rows.
struct RnnLayerShape {
  RnnMode mode = RnnMode::Lstm;
  bool reverse = false;    // steps run from the last to the first
  int64_t rows = 0;        // sum of batch_sizes
  int64_t batch = 0;       // batch_sizes[0]
  int64_t input_size = 0;  // I
  int64_t hidden = 0;      // H
  int64_t out_size = 0;    // P: proj_size when weight_hr is given, else H
  int64_t gates = 0;       // G = k * H (LSTM 4, GRU 3, plain 1)
  int64_t ws_cols = 0;     // workspace columns per row (see nn_rnn_layer_kernels.cpp)
  DimVector batch_sizes;   // per step
};

struct RnnLayerWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;  // biases both or neither; w_hr for LSTM only
};

// Fills output (rows x P), hy (batch x P), cy (batch x H, LSTM) and workspace (rows x ws_cols).
// RnnLayerKernel: declared in kernels/table.yaml.

struct RnnLayerGrads {
  Tensor input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr;  // b_*, w_hr, cx undefined when absent
};

// grad_output, grad_hy and grad_cy may be undefined (no gradient from that output).
// RnnLayerBackwardKernel: declared in kernels/table.yaml.

}  // namespace flambeau
