// Frontends of the convolutions. Every form (1-3 spatial dims, direct or
// transposed, 'same' padding) is reduced to three kernels on a ConvGeometry
// with three spatial dims: forward, gradient of input, gradient of weight. A
// transposed convolution's forward is the direct one's input gradient.
#include <sstream>

#include "generated/kernels.h"
#include "generated/ops_nn_conv.h"
#include "generated/ops_nn_resize.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/nn_conv_geometry.h"

namespace flambeau::ops {

namespace {

std::string list_str(IntList v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

std::string dims_str(IntList v) {  // (2 x 3)
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? " x " : "") << v[i];
  s << ")";
  return s.str();
}

DimVector expand_param(const char* name, IntList v, size_t k) {
  if (v.size() == 1 && k > 1) return DimVector(k, v[0]);
  FLB_CHECK(v.size() == k, "expected ", name, " to be a single integer value or a list of ", k,
            " values to match the convolution dimensions, but got ", name, "=", list_str(v));
  return DimVector(v);
}

struct Conv {
  const char* op;
  size_t k = 0;  // spatial dims
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  ScalarType compute = ScalarType::Float32;
  ConvGeometry g;
};

// Checks a (batched) convolution's arguments and fills its geometry.
Conv make_conv(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
               IntList stride, IntList padding, IntList dilation, bool transposed,
               IntList output_padding, int64_t groups) {
  Conv c;
  c.op = op;
  common_device({&input, &weight}, op);
  FLB_CHECK(weight->dim() >= 3 && weight->dim() <= 5, op,
            ": weight should have 3 to 5 dimensions (1 to 3 spatial), but got weight of size ",
            list_str(weight->sizes()));
  FLB_CHECK(input->dim() == weight->dim(), op, ": expected ", weight->dim(),
            "-dimensional input for ", weight->dim(), "-dimensional weight ",
            list_str(weight->sizes()), ", but got ", input->dim(), "-dimensional input of size ",
            list_str(input->sizes()), " instead");
  const size_t k = c.k = static_cast<size_t>(weight->dim() - 2);
  FLB_CHECK(input->dtype() == weight->dtype(), op, ": input type (", dtype_name(input->dtype()),
            ") and weight type (", dtype_name(weight->dtype()), ") should be the same");
  FLB_CHECK(is_floating(input->dtype()), op, ": not implemented for dtype ",
            dtype_name(input->dtype()), " (expected a floating-point input)");
  if (bias) {
    FLB_CHECK(bias->dtype() == input->dtype(), op, ": input type (", dtype_name(input->dtype()),
              ") and bias type (", dtype_name(bias->dtype()), ") should be the same");
  }
  c.compute = input->dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  c.stride = expand_param("stride", stride, k);
  c.padding = expand_param("padding", padding, k);
  c.dilation = expand_param("dilation", dilation, k);
  c.output_padding = expand_param("output_padding", output_padding, k);
  c.transposed = transposed;
  c.groups = groups;
  for (size_t i = 0; i < k; ++i) {
    FLB_CHECK(c.stride[i] > 0, op, ": non-positive stride is not supported");
    FLB_CHECK(c.padding[i] >= 0, op, ": negative padding is not supported");
    FLB_CHECK(c.output_padding[i] >= 0, op, ": negative output_padding is not supported");
    FLB_CHECK(c.dilation[i] > 0, op, ": dilation should be greater than zero, but got ",
              list_str(c.dilation));
  }
  FLB_CHECK(groups > 0, op, ": non-positive groups is not supported");
  IntList ws = weight->sizes(), xs = input->sizes();
  FLB_CHECK(ws[0] % groups == 0, op, ": Given groups=", groups,
            ", expected weight to be divisible by ", groups,
            " at dimension 0, but got weight of size ", list_str(ws), " instead");
  const int64_t channels = transposed ? ws[0] : ws[1] * groups;
  if (transposed) {
    FLB_CHECK(xs[1] == channels, op, ": Given transposed=1, weight of size ", list_str(ws),
              ", expected input", list_str(xs), " to have ", channels, " channels, but got ", xs[1],
              " channels instead");
  } else {
    FLB_CHECK(xs[1] == channels, op, ": Given groups=", groups, ", weight of size ", list_str(ws),
              ", expected input", list_str(xs), " to have ", channels, " channels, but got ", xs[1],
              " channels instead");
  }
  const int64_t out_channels = transposed ? ws[1] * groups : ws[0];
  if (bias) {
    FLB_CHECK(bias->dim() == 1 && bias->sizes()[0] == out_channels, op, ": Given weight of size ",
              list_str(ws), ", expected bias to be 1-dimensional with ", out_channels,
              " elements, but got bias of size ", list_str(bias->sizes()), " instead");
  }
  ConvGeometry& g = c.g;
  g.batch = xs[0];
  g.groups = groups;
  // The geometry is always that of the direct convolution: for a transposed one
  // its "input" is our output and its "output" is our input.
  g.in_channels = transposed ? out_channels : xs[1];
  g.out_channels = transposed ? xs[1] : out_channels;
  DimVector padded(k), kernel(k), sizes(k);
  // Window sizes in 128 bits: stride, padding and dilation may each be near 2^63.
  auto fit = [&](__int128 v) {
    FLB_CHECK(v >= INT64_MIN && v <= INT64_MAX, op, ": stride ", list_str(c.stride), ", padding ",
              list_str(c.padding), " and dilation ", list_str(c.dilation),
              " give sizes beyond the int64 range");
    return static_cast<int64_t>(v);
  };
  for (size_t i = 0; i < k; ++i) {
    size_t j = 3 - k + i;
    g.kernel[j] = ws[2 + i];
    g.stride[j] = c.stride[i];
    g.pad[j] = c.padding[i];
    g.dilation[j] = c.dilation[i];
    const int64_t span = fit(__int128(c.dilation[i]) * (ws[2 + i] - 1) + 1);
    if (transposed) {
      FLB_CHECK(c.output_padding[i] < c.stride[i] || c.output_padding[i] < c.dilation[i], op,
                ": output padding must be smaller than either stride or dilation, but got "
                "output_padding=",
                list_str(c.output_padding), ", stride=", list_str(c.stride),
                ", dilation=", list_str(c.dilation));
      g.out[j] = xs[2 + i];
      g.in[j] = fit(__int128(xs[2 + i] - 1) * c.stride[i] - 2 * __int128(c.padding[i]) + span +
                    c.output_padding[i]);
      sizes[i] = g.in[j];
    } else {
      g.in[j] = xs[2 + i];
      padded[i] = fit(xs[2 + i] + 2 * __int128(c.padding[i]));
      kernel[i] = span;
      g.out[j] = padded[i] < span ? 0 : (padded[i] - span) / c.stride[i] + 1;
    }
  }
  if (!transposed) {
    for (size_t i = 0; i < k; ++i)
      FLB_CHECK(padded[i] >= kernel[i], op,
                ": Calculated padded input size per channel: ", dims_str(padded),
                ". Kernel size: ", dims_str(kernel),
                ". Kernel size can't be greater than actual input size");
  } else {
    for (size_t i = 0; i < k; ++i)
      FLB_CHECK(
          sizes[i] > 0, op, ": Given input size per channel: ", dims_str(IntList(xs.data() + 2, k)),
          ". Calculated output size per channel: ", dims_str(sizes), ". Output size is too small");
  }
  return c;
}

// The spatial sizes of a (N, C, spatial...) tensor of the conv's "input" or "output" side.
DimVector full_shape(const Conv& c, int64_t channels, const std::array<int64_t, 3>& sp) {
  DimVector s{c.g.batch, channels};
  for (size_t i = 3 - c.k; i < 3; ++i) s.push_back(sp[i]);
  return s;
}

// A contiguous (N, C, D, H, W) view of `t` in the compute dtype.
Tensor as5d(const Tensor& t, ScalarType compute) {
  Tensor c = contiguous(to_dtype(t, compute));
  DimVector s(c->sizes());
  while (s.size() < 5) s.insert(2, 1);
  return reshape(c, s);
}

// Kernel launches: each allocates its result in the compute dtype, with k+2 dims.
Tensor run_forward(const Conv& c, const Tensor& x, const Tensor& w, const Tensor& bias) {
  DimVector shape = full_shape(c, c.g.out_channels, c.g.out);
  Tensor out = empty(shape, c.compute, x->device());
  if (out->numel() == 0) return out;
  Tensor b = bias ? contiguous(to_dtype(bias, c.compute)) : Tensor();
  kernel<kernels::conv_forward>(x->device())(out, as5d(x, c.compute), as5d(w, c.compute), b, c.g);
  return out;
}

Tensor run_backward_input(const Conv& c, const Tensor& gy, const Tensor& w, const Tensor& bias) {
  DimVector shape = full_shape(c, c.g.in_channels, c.g.in);
  Tensor out = empty(shape, c.compute, gy->device());
  if (out->numel() == 0) return out;
  Tensor b = bias ? contiguous(to_dtype(bias, c.compute)) : Tensor();
  kernel<kernels::conv_backward_input>(gy->device())(out, as5d(gy, c.compute), as5d(w, c.compute),
                                                     b, c.g);
  return out;
}

Tensor run_backward_weight(const Conv& c, const Tensor& gy, const Tensor& x, IntList wsizes) {
  Tensor out = empty(wsizes, c.compute, gy->device());
  if (out->numel() == 0) return out;
  DimVector w5(wsizes);
  while (w5.size() < 5) w5.insert(2, 1);
  kernel<kernels::conv_backward_weight>(gy->device())(reshape(out, w5), as5d(gy, c.compute),
                                                      as5d(x, c.compute), c.g);
  return out;
}

Tensor run_backward_bias(const Conv& c, const Tensor& gy, int64_t channels) {
  Tensor out = empty({channels}, c.compute, gy->device());
  if (channels == 0) return out;
  kernel<kernels::conv_backward_bias>(gy->device())(out, contiguous(to_dtype(gy, c.compute)));
  return out;
}

Tensor conv_batched(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                    IntList stride, IntList padding, IntList dilation, bool transposed,
                    IntList output_padding, int64_t groups) {
  Conv c = make_conv(op, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                     groups);
  Tensor out =
      transposed ? run_backward_input(c, input, weight, bias) : run_forward(c, input, weight, bias);
  return to_dtype(out, input->dtype());
}

// convNd / conv_transposeNd accept (C, ...) unbatched inputs too.
Tensor conv_any(const char* op, size_t k, const Tensor& input, const Tensor& weight,
                const Tensor& bias, IntList stride, IntList padding, IntList dilation,
                bool transposed, IntList output_padding, int64_t groups) {
  const int64_t d = input->dim(), kd = static_cast<int64_t>(k);
  FLB_CHECK(d == kd + 1 || d == kd + 2, "Expected ", kd + 1, "D (unbatched) or ", kd + 2,
            "D (batched) input to ", op, ", but got input of size: ", list_str(input->sizes()));
  FLB_CHECK(weight->dim() == kd + 2, op, ": expected weight to be ", kd + 2,
            "-dimensional, but got weight of size ", list_str(weight->sizes()));
  const bool batched = d == kd + 2;
  Tensor x = batched ? input : unsqueeze(input, 0);
  Tensor out = conv_batched(op, x, weight, bias, stride, padding, dilation, transposed,
                            output_padding, groups);
  return batched ? out : squeeze(out, DimVector{0});
}

Tensor conv_padding_str(const char* op, size_t k, const Tensor& input, const Tensor& weight,
                        const Tensor& bias, IntList stride, const std::string& padding,
                        IntList dilation, int64_t groups) {
  DimVector zero(k, 0);
  if (padding == "valid")
    return conv_any(op, k, input, weight, bias, stride, zero, dilation, false, zero, groups);
  FLB_CHECK(padding == "same", "Invalid padding string: '", padding, "'");
  DimVector st = expand_param("stride", stride, k), dil = expand_param("dilation", dilation, k);
  for (int64_t s : st)
    FLB_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  FLB_CHECK(weight->dim() == static_cast<int64_t>(k) + 2, op, ": expected weight to be ", k + 2,
            "-dimensional, but got weight of size ", list_str(weight->sizes()));
  // Total padding d * (k - 1) per dim; an odd total puts the extra element on the right.
  DimVector left(k), extra(2 * k, 0);
  bool symmetric = true;
  for (size_t i = 0; i < k; ++i) {
    int64_t total = 0;
    FLB_CHECK(!__builtin_mul_overflow(dil[i], weight->sizes()[2 + i] - 1, &total), op,
              ": dilation ", list_str(dil), " gives a window beyond the int64 range");
    left[i] = total / 2;
    if (total % 2) {
      symmetric = false;
      extra[2 * (k - 1 - i) + 1] = 1;
    }
  }
  Tensor x = symmetric ? input : constant_pad_nd(input, extra, Scalar(0.0));
  return conv_any(op, k, x, weight, bias, stride, left, dil, false, zero, groups);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups) {
  return conv_any("conv1d", 1, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups) {
  return conv_any("conv2d", 2, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, int64_t groups) {
  return conv_any("conv3d", 3, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}
Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                      const std::string& padding, IntList dilation, int64_t groups) {
  return conv_padding_str("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                      const std::string& padding, IntList dilation, int64_t groups) {
  return conv_padding_str("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                      const std::string& padding, IntList dilation, int64_t groups) {
  return conv_padding_str("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation) {
  return conv_any("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, true,
                  output_padding, groups);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation) {
  return conv_any("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, true,
                  output_padding, groups);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntList stride, IntList padding, IntList output_padding, int64_t groups,
                        IntList dilation) {
  return conv_any("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, true,
                  output_padding, groups);
}

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups) {
  return conv_batched("convolution", input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<DimVector>& bias_sizes, IntList stride, IntList padding, IntList dilation,
    bool transposed, IntList output_padding, int64_t groups, IntList output_mask) {
  const char* op = "convolution_backward";
  FLB_CHECK(output_mask.size() == 3, op, ": expected output_mask of 3 values, but got ",
            list_str(output_mask));
  Conv c = make_conv(op, input, weight, Tensor(), stride, padding, dilation, transposed,
                     output_padding, groups);
  DimVector expected = transposed ? full_shape(c, c.g.in_channels, c.g.in)
                                  : full_shape(c, c.g.out_channels, c.g.out);
  FLB_CHECK(grad_output->dtype() == input->dtype(), op, ": grad_output type (",
            dtype_name(grad_output->dtype()), ") and input type (", dtype_name(input->dtype()),
            ") should be the same");
  FLB_CHECK(grad_output->sizes() == IntList(expected), op, ": expected grad_output of size ",
            list_str(expected), ", but got ", list_str(grad_output->sizes()));
  Tensor gi, gw, gb;
  if (output_mask[0])
    gi = transposed ? run_forward(c, grad_output, weight, Tensor())
                    : run_backward_input(c, grad_output, weight, Tensor());
  if (output_mask[1])
    gw = transposed ? run_backward_weight(c, input, grad_output, weight->sizes())
                    : run_backward_weight(c, grad_output, input, weight->sizes());
  if (output_mask[2] && bias_sizes) gb = run_backward_bias(c, grad_output, grad_output->sizes()[1]);
  auto back = [&](const Tensor& t) { return t ? to_dtype(t, input->dtype()) : t; };
  return {back(gi), back(gw), back(gb)};
}

}  // namespace flambeau::ops
