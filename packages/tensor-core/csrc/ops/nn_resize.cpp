// Frontends of padding and interpolation. Constant padding copies into a
// filled tensor (any dtype, any number of dims, negative pads crop); the other
// padding modes and the resizes build per-axis taps for the resample kernels.
#include <cmath>
#include <functional>
#include <sstream>

#include "generated/kernels.h"
#include "generated/ops_nn_resize.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/nn_resize_geometry.h"
#include "ops/nn_resize_taps.h"

namespace flambeau::ops {

namespace {

std::string list_str(IntList v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

enum class PadMode { Reflect, Replicate, Circular };

struct Stack {
  const char* op;
  size_t k;
  Tensor x;  // (planes, D, H, W) contiguous, compute dtype
  DimVector lead;
  ScalarType dtype, compute;
  ResampleGeometry g;
  Tensor grad_output;  // set for a backward
  Tensor result;       // a forward's output, allocated by claim_output
};

// A (lead..., spatial k) tensor as a stack of planes. batched_only: exactly k + 2 dims.
Stack stack_of(const char* op, const Tensor& input, size_t k, bool batched_only) {
  const int64_t d = input->dim(), kd = static_cast<int64_t>(k);
  if (batched_only) {
    FLB_CHECK(d == kd + 2, op, ": expected a ", kd + 2,
              "D (N, C, ...) input, but got input of size ", list_str(input->sizes()));
  } else {
    FLB_CHECK(d == kd + 1 || d == kd + 2, op, ": Expected ", kd + 1, "D or ", kd + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
              "for input, but got: ",
              list_str(input->sizes()));
  }
  FLB_CHECK(is_floating(input->dtype()), op, ": not implemented for dtype ",
            dtype_name(input->dtype()), " (expected a floating-point input)");
  Stack s{op,
          k,
          Tensor(),
          DimVector(),
          input->dtype(),
          ScalarType::Float32,
          ResampleGeometry(),
          Tensor(),
          Tensor()};
  s.compute = input->dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  IntList sz = input->sizes();
  for (int64_t i = 0; i < d - kd; ++i) s.lead.push_back(sz[i]);
  s.g.planes = numel_of(s.lead);
  for (size_t i = 0; i < k; ++i) s.g.in[3 - k + i] = sz[d - kd + i];
  s.x = reshape(contiguous(to_dtype(input, s.compute)),
                {s.g.planes, s.g.in[0], s.g.in[1], s.g.in[2]});
  return s;
}

DimVector shape_of(const Stack& s, const std::array<int64_t, 3>& sp) {
  DimVector r = s.lead;
  for (size_t i = 3 - s.k; i < 3; ++i) r.push_back(sp[i]);
  return r;
}

// Axes not resampled read index o with weight 1.
void identity_axes(ResampleGeometry& g) {
  for (int j = 0; j < 3; ++j) {
    if (!g.axes[j].index.empty()) continue;
    g.out[j] = g.in[j];
    for (int64_t o = 0; o < g.in[j]; ++o) {
      g.axes[j].index.push_back(o);
      g.axes[j].weight.push_back(1.0);
    }
  }
}

// Called once the output's spatial sizes are known and before any tap table is
// built (tables hold an entry per position along each axis): the result (a
// forward's output, a backward's input gradient) is allocated now, so an
// impossible size fails cleanly here, and a backward checks grad_output against
// the output shape, so real memory bounds the tables.
void claim_output(Stack& s, const std::array<int64_t, 3>& out) {
  const std::array<int64_t, 3>& sp = s.grad_output ? s.g.in : out;
  if (s.grad_output) {
    DimVector want = shape_of(s, out);
    FLB_CHECK(s.grad_output->sizes() == IntList(want), s.op, ": expected grad_output of size ",
              list_str(want), ", but got ", list_str(s.grad_output->sizes()));
  }
  const Device device = s.grad_output ? s.grad_output->device() : s.x->device();
  s.result = empty({s.g.planes, sp[0], sp[1], sp[2]}, s.compute, device);
}

// The spatial output sizes of a resize: output_size on the resized axes.
std::array<int64_t, 3> resized(const Stack& s, IntList output_size) {
  std::array<int64_t, 3> out = s.g.in;
  for (size_t i = 0; i < s.k; ++i) out[3 - s.k + i] = output_size[i];
  return out;
}

// Claims the output and records the output grid; true when there is nothing to compute
// (a zero-size grid). Taps are then not built: their tables grow with the output axes,
// which may be huge beside an empty one.
bool claim_grid(Stack& s, const std::array<int64_t, 3>& out) {
  claim_output(s, out);
  s.g.out = out;
  return s.g.planes == 0 || out[0] == 0 || out[1] == 0 || out[2] == 0;
}

bool empty_grid(const Stack& s) {
  return s.g.planes == 0 || s.g.out[0] == 0 || s.g.out[1] == 0 || s.g.out[2] == 0;
}

Tensor run_forward(const Stack& s) {
  const Tensor& out = s.result;
  if (out->numel() && !empty_grid(s)) kernel<kernels::resample>(s.x->device())(out, s.x, s.g);
  return to_dtype(reshape(out, shape_of(s, s.g.out)), s.dtype);
}

// The gradient: grad_output (checked by claim_output) scattered back.
Tensor run_backward(const Stack& s, const Tensor& grad_output) {
  Tensor go = reshape(contiguous(to_dtype(grad_output, s.compute)),
                      {s.g.planes, s.g.out[0], s.g.out[1], s.g.out[2]});
  const Tensor& gi = s.result;
  if (gi->numel() && empty_grid(s))
    zero_(gi);  // nothing flows back from an empty grad_output
  else if (gi->numel())
    kernel<kernels::resample_backward>(grad_output->device())(gi, go, s.g);
  return to_dtype(reshape(gi, shape_of(s, s.g.in)), s.dtype);
}

// Taps of a non-constant padding; pad holds (left, right) pairs from the last dim.
void pad_taps(Stack& s, IntList pad, PadMode mode) {
  const size_t k = s.k;
  FLB_CHECK(pad.size() == 2 * k, s.op, ": expected padding of ", 2 * k, " values, but got ",
            list_str(pad));
  std::array<int64_t, 3> outs = s.g.in;
  for (size_t i = 0; i < k; ++i) {
    const size_t j = 3 - 1 - i;  // pad pairs start at the last dim
    const int64_t n = s.g.in[j], l = pad[2 * i], r = pad[2 * i + 1];
    const int64_t dim = static_cast<int64_t>(s.lead.size() + k - 1 - i);
    if (mode == PadMode::Reflect) {
      FLB_CHECK(l < n && r < n, s.op,
                ": Argument #4: Padding size should be less than the "
                "corresponding input dimension, but got: padding (",
                l, ", ", r, ") at dimension ", dim, " of input ", list_str(shape_of(s, s.g.in)));
    } else if (mode == PadMode::Circular) {
      FLB_CHECK(l <= n && r <= n, s.op, ": Padding value causes wrapping around more than once.");
    }
    FLB_CHECK(n > 0, s.op, ": input dimension ", dim, " is empty");
    int64_t out = 0;
    FLB_CHECK(!__builtin_add_overflow(n, l, &out) && !__builtin_add_overflow(out, r, &out), s.op,
              ": padding (", l, ", ", r, ") of input size ", n, " overflows");
    FLB_CHECK(out > 0, s.op, ": input size ", n, " at dimension ", dim, " with padding (", l, ", ",
              r, ") gives output size ", out, ", which is invalid (should be at least 1)");
    outs[j] = out;
  }
  if (claim_grid(s, outs)) return;
  for (size_t i = 0; i < k; ++i) {
    const size_t j = 3 - 1 - i;
    const int64_t n = s.g.in[j], l = pad[2 * i], out = outs[j];
    s.g.out[j] = out;
    AxisTaps& a = s.g.axes[j];
    for (int64_t o = 0; o < out; ++o) {
      int64_t src = o - l;
      if (mode == PadMode::Reflect) {
        if (src < 0) src = -src;
        if (src >= n) src = 2 * (n - 1) - src;
      } else if (mode == PadMode::Replicate) {
        src = std::min(std::max<int64_t>(src, 0), n - 1);
      } else {
        src = ((src % n) + n) % n;
      }
      a.index.push_back(src);
      a.weight.push_back(1.0);
    }
  }
  identity_axes(s.g);
}

// grad_output: given for a backward.
Stack pad_stack(const char* op, const Tensor& input, IntList pad, PadMode mode,
                const Tensor& grad_output = Tensor()) {
  FLB_CHECK(pad.size() % 2 == 0 && !pad.empty() && pad.size() <= 6, op,
            ": padding of 2, 4 or 6 values expected, but got ", list_str(pad));
  Stack s = stack_of(op, input, pad.size() / 2, false);
  s.grad_output = grad_output;
  pad_taps(s, pad, mode);
  return s;
}

// Nearest: src = min(floor(o * scale), in - 1), with PyTorch's float scale.
void nearest_taps(Stack& s, IntList output_size, std::array<std::optional<double>, 3> scales) {
  if (claim_grid(s, resized(s, output_size))) return;
  for (size_t i = 0; i < s.k; ++i) {
    const size_t j = 3 - s.k + i;
    const int64_t in = s.g.in[j], out = output_size[i];
    const auto& sc = scales[j];
    const float scale = sc && *sc > 0 ? static_cast<float>(1.0 / *sc)
                                      : static_cast<float>(in) / static_cast<float>(out);
    s.g.out[j] = out;
    for (int64_t o = 0; o < out; ++o) {
      int64_t src = out == in ? o
                    : out == 2 * in
                        ? o >> 1
                        : clamped_index(std::floor(static_cast<float>(o) * scale), 0, in - 1);
      s.g.axes[j].index.push_back(src);
      s.g.axes[j].weight.push_back(1.0);
    }
  }
  identity_axes(s.g);
}

// Linear: PyTorch's area_pixel_compute_source_index, two taps per output.
void linear_taps(Stack& s, IntList output_size, bool align_corners,
                 std::array<std::optional<double>, 3> scales) {
  if (claim_grid(s, resized(s, output_size))) return;
  for (size_t i = 0; i < s.k; ++i) {
    const size_t j = 3 - s.k + i;
    const int64_t in = s.g.in[j], out = output_size[i];
    const auto& sc = scales[j];
    double scale;
    if (align_corners)
      scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    else
      scale = sc && *sc > 0 ? 1.0 / *sc : static_cast<double>(in) / static_cast<double>(out);
    s.g.out[j] = out;
    AxisTaps& a = s.g.axes[j];
    a.taps = 2;
    for (int64_t o = 0; o < out; ++o) {
      double src = align_corners ? scale * static_cast<double>(o)
                                 : std::max(scale * (static_cast<double>(o) + 0.5) - 0.5, 0.0);
      int64_t i0 = clamped_index(src, 0, in - 1);
      int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      double l1 = std::min(src - static_cast<double>(i0), 1.0);
      a.index.insert(a.index.end(), {i0, i1});
      a.weight.insert(a.weight.end(), {1.0 - l1, l1});
    }
  }
  identity_axes(s.g);
}

void check_sizes(const char* op, const Stack& s, IntList output_size) {
  FLB_CHECK(output_size.size() == s.k, op, ": expected output_size of ", s.k, " values, but got ",
            list_str(output_size));
  bool ok = true;
  for (size_t i = 0; i < s.k; ++i) ok = ok && output_size[i] > 0 && s.g.in[3 - s.k + i] > 0;
  FLB_CHECK(ok, op, ": Input and output sizes should be greater than 0, but got input ",
            list_str(IntList(s.g.in.data() + 3 - s.k, s.k)), " and output ", list_str(output_size));
}

// The forward geometry of a resize backward, from input_size alone (nothing of
// that size is allocated before grad_output is checked against output_size).
Stack backward_stack(const char* op, size_t k, const Tensor& grad_output, IntList input_size,
                     IntList output_size) {
  FLB_CHECK(input_size.size() == k + 2, op, ": expected input_size of ", k + 2, " values, but got ",
            list_str(input_size));
  FLB_CHECK(is_floating(grad_output->dtype()), op, ": not implemented for dtype ",
            dtype_name(grad_output->dtype()), " (expected a floating-point grad_output)");
  checked_nbytes(input_size, grad_output->dtype(), op);
  Stack s{op,
          k,
          Tensor(),
          DimVector(),
          grad_output->dtype(),
          ScalarType::Float32,
          ResampleGeometry(),
          grad_output,
          Tensor()};
  s.compute = s.dtype == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  s.lead = DimVector{input_size[0], input_size[1]};
  s.g.planes = numel_of(s.lead);
  for (size_t i = 0; i < k; ++i) s.g.in[3 - k + i] = input_size[2 + i];
  check_sizes(op, s, output_size);
  return s;
}

using Scales = std::array<std::optional<double>, 3>;

Tensor nearest(const char* op, size_t k, const Tensor& input, IntList output_size, Scales sc) {
  Stack s = stack_of(op, input, k, true);
  check_sizes(op, s, output_size);
  nearest_taps(s, output_size, sc);
  return run_forward(s);
}
Tensor nearest_backward(const char* op, size_t k, const Tensor& grad_output, IntList output_size,
                        IntList input_size, Scales sc) {
  Stack s = backward_stack(op, k, grad_output, input_size, output_size);
  nearest_taps(s, output_size, sc);
  return run_backward(s, grad_output);
}
Tensor linear(const char* op, size_t k, const Tensor& input, IntList output_size,
              bool align_corners, Scales sc) {
  Stack s = stack_of(op, input, k, true);
  check_sizes(op, s, output_size);
  linear_taps(s, output_size, align_corners, sc);
  return run_forward(s);
}
Tensor linear_backward(const char* op, size_t k, const Tensor& grad_output, IntList output_size,
                       IntList input_size, bool align_corners, Scales sc) {
  Stack s = backward_stack(op, k, grad_output, input_size, output_size);
  linear_taps(s, output_size, align_corners, sc);
  return run_backward(s, grad_output);
}

// The other modes: each resized axis gets the taps of axis(in, out, scale).
using AxisFn = std::function<AxisTaps(int64_t in, int64_t out, std::optional<double> scale)>;

void mode_taps(Stack& s, IntList output_size, const Scales& sc, const AxisFn& axis) {
  if (claim_grid(s, resized(s, output_size))) return;
  for (size_t i = 0; i < s.k; ++i) {
    const size_t j = 3 - s.k + i;
    s.g.out[j] = output_size[i];
    s.g.axes[j] = axis(s.g.in[j], output_size[i], sc[j]);
  }
  identity_axes(s.g);
}
Tensor mode_resize(const char* op, size_t k, const Tensor& input, IntList output_size,
                   const Scales& sc, const AxisFn& axis) {
  Stack s = stack_of(op, input, k, true);
  check_sizes(op, s, output_size);
  mode_taps(s, output_size, sc, axis);
  return run_forward(s);
}
Tensor mode_resize_backward(const char* op, size_t k, const Tensor& grad_output,
                            IntList output_size, IntList input_size, const Scales& sc,
                            const AxisFn& axis) {
  Stack s = backward_stack(op, k, grad_output, input_size, output_size);
  mode_taps(s, output_size, sc, axis);
  return run_backward(s, grad_output);
}

AxisFn cubic(bool align_corners) {
  return [=](int64_t in, int64_t out, std::optional<double> scale) {
    return cubic_axis_taps(in, out, align_corners, scale);
  };
}
AxisFn antialias(bool align_corners, bool is_cubic) {
  return [=](int64_t in, int64_t out, std::optional<double> scale) {
    return antialias_axis_taps(in, out, align_corners, scale, is_cubic);
  };
}
const AxisFn kNearestExact = nearest_exact_axis_taps;

}  // namespace

Tensor constant_pad_nd(const Tensor& input, IntList pad, const Scalar& value) {
  const char* op = "constant_pad_nd";
  FLB_CHECK(pad.size() % 2 == 0, op, ": Length of pad must be even but instead it equals ",
            pad.size());
  const int64_t k = static_cast<int64_t>(pad.size() / 2), d = input->dim();
  FLB_CHECK(k <= d, op,
            ": Length of pad should be no more than twice the number of dimensions "
            "of the input. Pad length is ",
            pad.size(), " while the input has ", d, " dimensions.");
  DimVector shape(input->sizes());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = d - 1 - i, n = shape[dim];
    int64_t out = 0;
    FLB_CHECK(!__builtin_add_overflow(n, pad[2 * i], &out) &&
                  !__builtin_add_overflow(out, pad[2 * i + 1], &out),
              op, ": padding (", pad[2 * i], ", ", pad[2 * i + 1], ") of size ", n,
              " overflows the int64 range");
    FLB_CHECK(out >= 0, op, ": The input size ", n, ", plus negative padding ", pad[2 * i], " and ",
              pad[2 * i + 1],
              " resulted in a negative output size, which is invalid. Check dimension ", dim,
              " of your input.");
    shape[dim] = out;
  }
  Tensor result = full(shape, value, input->dtype(), input->device(), false);
  Tensor src = input, dst = result;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = d - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
    const int64_t len = input->sizes()[dim] - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0);
    if (len <= 0) return result;
    src = narrow(src, dim, std::max<int64_t>(-l, 0), len);
    dst = narrow(dst, dim, std::max<int64_t>(l, 0), len);
  }
  if (dst->numel()) copy_into(dst, src);
  return result;
}

#define FLB_PAD(KIND, MODE, N)                                                               \
  Tensor KIND##_pad##N##d(const Tensor& input, IntList padding) {                            \
    return run_forward(pad_stack(#KIND "_pad" #N "d", input, padding, PadMode::MODE));       \
  }                                                                                          \
  Tensor KIND##_pad##N##d_backward(const Tensor& grad_output, const Tensor& input,           \
                                   IntList padding) {                                        \
    return run_backward(                                                                     \
        pad_stack(#KIND "_pad" #N "d_backward", input, padding, PadMode::MODE, grad_output), \
        grad_output);                                                                        \
  }
FLB_PAD(reflection, Reflect, 1)
FLB_PAD(reflection, Reflect, 2)
FLB_PAD(reflection, Reflect, 3)
FLB_PAD(replication, Replicate, 1)
FLB_PAD(replication, Replicate, 2)
FLB_PAD(replication, Replicate, 3)
#undef FLB_PAD

Tensor pad_circular(const Tensor& input, IntList pad) {
  return run_forward(pad_stack("pad_circular", input, pad, PadMode::Circular));
}
Tensor pad_circular_backward(const Tensor& grad_output, const Tensor& input, IntList pad) {
  return run_backward(
      pad_stack("pad_circular_backward", input, pad, PadMode::Circular, grad_output), grad_output);
}

Tensor pad(const Tensor& input, IntList pad, const std::string& mode, std::optional<double> value) {
  FLB_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  FLB_CHECK(static_cast<int64_t>(pad.size() / 2) <= input->dim(),
            "Padding length should be less than or equal to two times the input dimension but "
            "got padding length ",
            pad.size(), " and input of dimension ", input->dim());
  if (mode == "constant") return constant_pad_nd(input, pad, Scalar(value.value_or(0.0)));
  FLB_CHECK(!value, "Padding mode \"", mode, "\" doesn't take in value argument");
  const size_t k = pad.size() / 2;
  FLB_CHECK(k >= 1 && k <= 3 && input->dim() >= static_cast<int64_t>(k) + 1 &&
                input->dim() <= static_cast<int64_t>(k) + 2,
            "pad: padding mode '", mode,
            "' pads the last 1 to 3 dims of a (batched) input "
            "with 1 or 2 leading dims; got padding length ",
            pad.size(), " for input of size ", list_str(input->sizes()));
  if (mode == "reflect") return run_forward(pad_stack("pad", input, pad, PadMode::Reflect));
  if (mode == "replicate") return run_forward(pad_stack("pad", input, pad, PadMode::Replicate));
  if (mode == "circular") return run_forward(pad_stack("pad", input, pad, PadMode::Circular));
  fail<ValueError>("Unrecognised padding mode ", mode);
}

Tensor upsample_nearest1d(const Tensor& input, IntList output_size, std::optional<double> scales) {
  return nearest("upsample_nearest1d", 1, input, output_size, {std::nullopt, std::nullopt, scales});
}
Tensor upsample_nearest2d(const Tensor& input, IntList output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return nearest("upsample_nearest2d", 2, input, output_size, {std::nullopt, scales_h, scales_w});
}
Tensor upsample_nearest3d(const Tensor& input, IntList output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return nearest("upsample_nearest3d", 3, input, output_size, {scales_d, scales_h, scales_w});
}
Tensor upsample_nearest1d_backward(const Tensor& grad_output, IntList output_size,
                                   IntList input_size, std::optional<double> scales) {
  return nearest_backward("upsample_nearest1d_backward", 1, grad_output, output_size, input_size,
                          {std::nullopt, std::nullopt, scales});
}
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntList output_size,
                                   IntList input_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w) {
  return nearest_backward("upsample_nearest2d_backward", 2, grad_output, output_size, input_size,
                          {std::nullopt, scales_h, scales_w});
}
Tensor upsample_nearest3d_backward(const Tensor& grad_output, IntList output_size,
                                   IntList input_size, std::optional<double> scales_d,
                                   std::optional<double> scales_h, std::optional<double> scales_w) {
  return nearest_backward("upsample_nearest3d_backward", 3, grad_output, output_size, input_size,
                          {scales_d, scales_h, scales_w});
}
Tensor upsample_linear1d(const Tensor& input, IntList output_size, bool align_corners,
                         std::optional<double> scales) {
  return linear("upsample_linear1d", 1, input, output_size, align_corners,
                {std::nullopt, std::nullopt, scales});
}
Tensor upsample_bilinear2d(const Tensor& input, IntList output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return linear("upsample_bilinear2d", 2, input, output_size, align_corners,
                {std::nullopt, scales_h, scales_w});
}
Tensor upsample_trilinear3d(const Tensor& input, IntList output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  return linear("upsample_trilinear3d", 3, input, output_size, align_corners,
                {scales_d, scales_h, scales_w});
}
Tensor upsample_linear1d_backward(const Tensor& grad_output, IntList output_size,
                                  IntList input_size, bool align_corners,
                                  std::optional<double> scales) {
  return linear_backward("upsample_linear1d_backward", 1, grad_output, output_size, input_size,
                         align_corners, {std::nullopt, std::nullopt, scales});
}
Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntList output_size,
                                    IntList input_size, bool align_corners,
                                    std::optional<double> scales_h,
                                    std::optional<double> scales_w) {
  return linear_backward("upsample_bilinear2d_backward", 2, grad_output, output_size, input_size,
                         align_corners, {std::nullopt, scales_h, scales_w});
}
Tensor upsample_trilinear3d_backward(const Tensor& grad_output, IntList output_size,
                                     IntList input_size, bool align_corners,
                                     std::optional<double> scales_d, std::optional<double> scales_h,
                                     std::optional<double> scales_w) {
  return linear_backward("upsample_trilinear3d_backward", 3, grad_output, output_size, input_size,
                         align_corners, {scales_d, scales_h, scales_w});
}

Tensor upsample_bicubic2d(const Tensor& input, IntList output_size, bool align_corners,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return mode_resize("upsample_bicubic2d", 2, input, output_size,
                     {std::nullopt, scales_h, scales_w}, cubic(align_corners));
}
Tensor upsample_bicubic2d_backward(const Tensor& grad_output, IntList output_size,
                                   IntList input_size, bool align_corners,
                                   std::optional<double> scales_h, std::optional<double> scales_w) {
  return mode_resize_backward("upsample_bicubic2d_backward", 2, grad_output, output_size,
                              input_size, {std::nullopt, scales_h, scales_w}, cubic(align_corners));
}

Tensor _upsample_nearest_exact1d(const Tensor& input, IntList output_size,
                                 std::optional<double> scales) {
  return mode_resize("_upsample_nearest_exact1d", 1, input, output_size,
                     {std::nullopt, std::nullopt, scales}, kNearestExact);
}
Tensor _upsample_nearest_exact2d(const Tensor& input, IntList output_size,
                                 std::optional<double> scales_h, std::optional<double> scales_w) {
  return mode_resize("_upsample_nearest_exact2d", 2, input, output_size,
                     {std::nullopt, scales_h, scales_w}, kNearestExact);
}
Tensor _upsample_nearest_exact3d(const Tensor& input, IntList output_size,
                                 std::optional<double> scales_d, std::optional<double> scales_h,
                                 std::optional<double> scales_w) {
  return mode_resize("_upsample_nearest_exact3d", 3, input, output_size,
                     {scales_d, scales_h, scales_w}, kNearestExact);
}
Tensor _upsample_nearest_exact1d_backward(const Tensor& grad_output, IntList output_size,
                                          IntList input_size, std::optional<double> scales) {
  return mode_resize_backward("_upsample_nearest_exact1d_backward", 1, grad_output, output_size,
                              input_size, {std::nullopt, std::nullopt, scales}, kNearestExact);
}
Tensor _upsample_nearest_exact2d_backward(const Tensor& grad_output, IntList output_size,
                                          IntList input_size, std::optional<double> scales_h,
                                          std::optional<double> scales_w) {
  return mode_resize_backward("_upsample_nearest_exact2d_backward", 2, grad_output, output_size,
                              input_size, {std::nullopt, scales_h, scales_w}, kNearestExact);
}
Tensor _upsample_nearest_exact3d_backward(const Tensor& grad_output, IntList output_size,
                                          IntList input_size, std::optional<double> scales_d,
                                          std::optional<double> scales_h,
                                          std::optional<double> scales_w) {
  return mode_resize_backward("_upsample_nearest_exact3d_backward", 3, grad_output, output_size,
                              input_size, {scales_d, scales_h, scales_w}, kNearestExact);
}

Tensor _upsample_bilinear2d_aa(const Tensor& input, IntList output_size, bool align_corners,
                               std::optional<double> scales_h, std::optional<double> scales_w) {
  return mode_resize("_upsample_bilinear2d_aa", 2, input, output_size,
                     {std::nullopt, scales_h, scales_w}, antialias(align_corners, false));
}
Tensor _upsample_bilinear2d_aa_backward(const Tensor& grad_output, IntList output_size,
                                        IntList input_size, bool align_corners,
                                        std::optional<double> scales_h,
                                        std::optional<double> scales_w) {
  return mode_resize_backward("_upsample_bilinear2d_aa_backward", 2, grad_output, output_size,
                              input_size, {std::nullopt, scales_h, scales_w},
                              antialias(align_corners, false));
}
Tensor _upsample_bicubic2d_aa(const Tensor& input, IntList output_size, bool align_corners,
                              std::optional<double> scales_h, std::optional<double> scales_w) {
  return mode_resize("_upsample_bicubic2d_aa", 2, input, output_size,
                     {std::nullopt, scales_h, scales_w}, antialias(align_corners, true));
}
Tensor _upsample_bicubic2d_aa_backward(const Tensor& grad_output, IntList output_size,
                                       IntList input_size, bool align_corners,
                                       std::optional<double> scales_h,
                                       std::optional<double> scales_w) {
  return mode_resize_backward("_upsample_bicubic2d_aa_backward", 2, grad_output, output_size,
                              input_size, {std::nullopt, scales_h, scales_w},
                              antialias(align_corners, true));
}

}  // namespace flambeau::ops
