// Frontends of pooling. Inputs are (N, C, spatial...) or unbatched (C,
// spatial...); the kernels see contiguous (planes, D, H, W) stacks in
// float32/float64 (16-bit floats go through float32).
#include <sstream>

#include "generated/kernels.h"
#include "generated/ops_nn_pool.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/nn_pool_geometry.h"

namespace flambeau::ops {

namespace {

std::string list_str(IntList v, const char* sep = ", ", const char* open = "[",
                     const char* close = "]") {
  std::ostringstream s;
  s << open;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? sep : "") << v[i];
  s << close;
  return s.str();
}

struct Planes {
  const char* op;
  size_t k;
  Tensor x;        // (planes, D, H, W), contiguous, compute dtype
  DimVector lead;  // the batch/channel dims
  ScalarType dtype, compute;
  PoolGeometry g;
};

// Checks a pooling input of k spatial dims and stacks its planes.
Planes planes_of(const char* op, const Tensor& input, size_t k, bool allow_empty_spatial = false) {
  const int64_t d = input->dim(), kd = static_cast<int64_t>(k);
  FLB_CHECK(d == kd + 1 || d == kd + 2, op, ": Expected ", kd + 1, "D or ", kd + 2,
            "D (batch mode) tensor for input, but got input of size: ", list_str(input->sizes()));
  FLB_CHECK(is_floating(input->dtype()), op, ": not implemented for dtype ",
            dtype_name(input->dtype()), " (expected a floating-point input)");
  IntList s = input->sizes();
  for (int64_t i = d == kd + 2 ? 1 : 0; i < d; ++i)
    FLB_CHECK(allow_empty_spatial || s[i] > 0, op,
              ": Expected input to have non-zero size for non-batch dimensions, but input has "
              "sizes ",
              list_str(s), " with dimension ", i, " being empty");
  Planes p{op, k, Tensor(), DimVector(), input->dtype(), ScalarType::Float32, PoolGeometry()};
  p.compute = input->dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  for (int64_t i = 0; i < d - kd; ++i) p.lead.push_back(s[i]);
  p.g.planes = numel_of(p.lead);
  for (size_t i = 0; i < k; ++i) p.g.in[3 - k + i] = s[d - kd + i];
  p.x = reshape(contiguous(to_dtype(input, p.compute)),
                {p.g.planes, p.g.in[0], p.g.in[1], p.g.in[2]});
  return p;
}

// (planes, oD, oH, oW) -> lead + the k spatial output dims.
DimVector out_shape(const Planes& p, const std::array<int64_t, 3>& sp) {
  DimVector s = p.lead;
  for (size_t i = 3 - p.k; i < 3; ++i) s.push_back(sp[i]);
  return s;
}

Tensor new_planes(const Planes& p, const std::array<int64_t, 3>& sp, ScalarType dtype) {
  return empty({p.g.planes, sp[0], sp[1], sp[2]}, dtype, p.x->device());
}

Tensor finish(const Planes& p, const Tensor& t, const std::array<int64_t, 3>& sp) {
  return to_dtype(reshape(t, out_shape(p, sp)), p.dtype);
}

DimVector expand(const char* op, const char* name, IntList v, size_t k) {
  if (v.size() == 1) return DimVector(k, v[0]);
  FLB_CHECK(v.size() == k, op, ": ", name, " must either be a single int, or a tuple of ", k,
            " ints");
  return DimVector(v);
}

// Sets kernel/stride/padding/dilation and the output size (PyTorch's
// pooling_output_shape with ceil_mode), checking them as PyTorch does.
void set_window(Planes& p, IntList kernel_size, const std::optional<DimVector>& stride,
                IntList padding, IntList dilation, bool ceil_mode, bool is_max) {
  const size_t k = p.k;
  const char* op = p.op;
  DimVector ks = expand(op, "kernel_size", kernel_size, k);
  DimVector st = stride && !stride->empty() ? expand(op, "stride", *stride, k) : ks;
  DimVector pd = expand(op, "padding", padding, k), dl = expand(op, "dilation", dilation, k);
  std::array<int64_t, 3> out{1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    FLB_CHECK(ks[i] > 0, op,
              ": kernel size should be greater than zero, but got kernel_size=", list_str(ks));
    FLB_CHECK(st[i] > 0, op, ": stride should be greater than zero, but got stride=", list_str(st));
    FLB_CHECK(dl[i] > 0, op,
              ": dilation should be greater than zero, but got dilation=", list_str(dl));
    FLB_CHECK(pd[i] >= 0, op, ": pad must be non-negative, but got padding=", list_str(pd));
    // Sizes in 128 bits: kernel, stride, dilation and padding may each be near 2^63.
    using Wide = __int128;
    const Wide wide_span = Wide(dl[i]) * (ks[i] - 1) + 1;
    FLB_CHECK(wide_span <= INT64_MAX, op, ": the window of kernel_size=", ks[i],
              " and dilation=", dl[i], " is too large");
    const int64_t span = static_cast<int64_t>(wide_span);
    if (is_max) {
      FLB_CHECK(pd[i] <= span / 2, op,
                ": pad should be at most half of effective kernel size, but got pad=", pd[i],
                ", kernel_size=", ks[i], " and dilation=", dl[i]);
    } else {
      FLB_CHECK(pd[i] <= ks[i] / 2, op,
                ": pad should be at most half of kernel size, but got pad=", pd[i],
                " and kernel_size=", ks[i]);
    }
    const size_t j = 3 - k + i;
    const int64_t in = p.g.in[j];
    const Wide num = Wide(in) + 2 * Wide(pd[i]) - span + (ceil_mode ? st[i] - 1 : 0);
    Wide o = (num >= 0 ? num / st[i] : -((-num + st[i] - 1) / st[i])) + 1;
    if (ceil_mode && (o - 1) * st[i] >= Wide(in) + pd[i]) --o;
    out[j] = static_cast<int64_t>(o);  // at most in + 2 * pad + 1
    p.g.kernel[j] = ks[i];
    p.g.stride[j] = st[i];
    p.g.pad[j] = pd[i];
    p.g.dilation[j] = dl[i];
  }
  bool ok = true;
  for (int64_t o : out) ok = ok && o > 0;
  if (!ok) {
    DimVector in_sizes{p.lead.empty() ? 1 : p.lead.back()}, out_sizes = in_sizes;
    for (size_t j = 3 - k; j < 3; ++j) {
      in_sizes.push_back(p.g.in[j]);
      out_sizes.push_back(out[j]);
    }
    fail(op, ": Given input size: ", list_str(in_sizes, "x", "(", ")"),
         ". Calculated output size: ", list_str(out_sizes, "x", "(", ")"),
         ". Output size is too small");
  }
  p.g.out = out;
}

std::tuple<Tensor, Tensor> max_pool_any(const char* op, size_t k, const Tensor& input,
                                        IntList kernel_size, const std::optional<DimVector>& stride,
                                        IntList padding, IntList dilation, bool ceil_mode) {
  Planes p = planes_of(op, input, k);
  set_window(p, kernel_size, stride, padding, dilation, ceil_mode, true);
  Tensor out = new_planes(p, p.g.out, p.compute), idx = new_planes(p, p.g.out, ScalarType::Int64);
  if (out->numel()) kernel<kernels::max_pool>(input->device())(out, idx, p.x, p.g);
  return {finish(p, out, p.g.out), reshape(idx, out_shape(p, p.g.out))};
}

// Scatters `src` (shaped like `indices`) into zeros of `shape` at the indices.
Tensor scatter_planes(const char* op, const Planes& p, const Tensor& src, const Tensor& indices,
                      bool accumulate) {
  FLB_CHECK(indices->dtype() == ScalarType::Int64, op,
            ": elements in indices should be type int64 but got: ", dtype_name(indices->dtype()));
  FLB_CHECK(src->sizes() == indices->sizes(), op,
            ": Expected shape of indices to be same as that of the input tensor (",
            list_str(src->sizes()),
            ") but got indices tensor with shape: ", list_str(indices->sizes()));
  Tensor dst = new_planes(p, p.g.in, p.compute);
  const int64_t sn = p.g.planes ? src->numel() / p.g.planes : 0;
  if (dst->numel()) {
    Tensor s = reshape(contiguous(to_dtype(src, p.compute)), {p.g.planes, sn});
    Tensor ix = reshape(contiguous(indices), {p.g.planes, sn});
    int64_t at = kernel<kernels::pool_index_scatter>(src->device())(dst, s, ix, accumulate);
    FLB_CHECK(at < 0, op,
              ": Found an invalid max index: ", at < 0 ? 0 : ops::cpu(ix)->data_as<int64_t>()[at],
              " (output volumes are of size ",
              list_str(IntList(p.g.in.data() + 3 - p.k, p.k), "x", "", ""), ")");
  }
  return finish(p, dst, p.g.in);
}

Tensor max_pool_backward(const char* op, size_t k, const Tensor& grad_output, const Tensor& input,
                         const Tensor& indices) {
  Planes p = planes_of(op, input, k);
  FLB_CHECK(grad_output->dim() == input->dim(), op, ": expected grad_output of ", input->dim(),
            " dims, but got ", list_str(grad_output->sizes()));
  return scatter_planes(op, p, grad_output, indices, true);
}

Tensor max_unpool_any(const char* op, size_t k, const Tensor& input, const Tensor& indices,
                      IntList output_size) {
  FLB_CHECK(output_size.size() == k, op, ": There should be exactly ", k,
            " elements (depth, height, width) in output_size, but got ", output_size.size(),
            " elements.");
  const int64_t d = input->dim(), kd = static_cast<int64_t>(k);
  FLB_CHECK(d == kd + 1 || d == kd + 2, op, ": Expected ", kd + 1, "D or ", kd + 2,
            "D tensor for input, but got input of size: ", list_str(input->sizes()));
  // Planes of the output: same leading dims as the input, spatial output_size.
  DimVector shape;
  for (int64_t i = 0; i < d - kd; ++i) shape.push_back(input->sizes()[i]);
  for (int64_t v : output_size) {
    FLB_CHECK(v > 0, op, ": output_size must be positive, but got ", list_str(output_size));
    shape.push_back(v);
  }
  Planes p = planes_of(op, empty(shape, input->dtype(), input->device()), k);
  return scatter_planes(op, p, input, indices, false);
}

Tensor avg_pool_any(const char* op, size_t k, const Tensor& input, IntList kernel_size,
                    const std::optional<DimVector>& stride, IntList padding, bool ceil_mode,
                    bool count_include_pad, std::optional<int64_t> divisor_override) {
  Planes p = planes_of(op, input, k);
  set_window(p, kernel_size, stride, padding, {1}, ceil_mode, false);
  FLB_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
  p.g.count_include_pad = count_include_pad;
  p.g.divisor = divisor_override.value_or(0);
  Tensor out = new_planes(p, p.g.out, p.compute);
  if (out->numel()) kernel<kernels::avg_pool>(input->device())(out, p.x, p.g);
  return finish(p, out, p.g.out);
}

// grad_output must have the forward's output shape.
Tensor check_grad(const Planes& p, const Tensor& grad_output, const std::array<int64_t, 3>& sp) {
  DimVector want = out_shape(p, sp);
  FLB_CHECK(grad_output->sizes() == IntList(want), p.op, ": expected grad_output of size ",
            list_str(want), ", but got ", list_str(grad_output->sizes()));
  return reshape(contiguous(to_dtype(grad_output, p.compute)), {p.g.planes, sp[0], sp[1], sp[2]});
}

Tensor avg_pool_backward(const char* op, size_t k, const Tensor& grad_output, const Tensor& input,
                         IntList kernel_size, const std::optional<DimVector>& stride,
                         IntList padding, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  Planes p = planes_of(op, input, k);
  set_window(p, kernel_size, stride, padding, {1}, ceil_mode, false);
  FLB_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
  p.g.count_include_pad = count_include_pad;
  p.g.divisor = divisor_override.value_or(0);
  Tensor go = check_grad(p, grad_output, p.g.out);
  Tensor gi = new_planes(p, p.g.in, p.compute);
  if (gi->numel()) kernel<kernels::avg_pool_backward>(input->device())(gi, go, p.g);
  return finish(p, gi, p.g.in);
}

Planes adaptive_planes(const char* op, const Tensor& input, size_t k, IntList output_size) {
  FLB_CHECK(output_size.size() == k, op, ": output_size must be ", k, "-dimensional, but got ",
            list_str(output_size));
  Planes p = planes_of(op, input, k);
  for (size_t i = 0; i < k; ++i) {
    FLB_CHECK(output_size[i] >= 0, op,
              ": elements of output_size must be greater than or equal "
              "to 0 but received ",
              list_str(output_size));
    p.g.out[3 - k + i] = output_size[i];
  }
  return p;
}

Tensor adaptive_avg_any(const char* op, size_t k, const Tensor& input, IntList output_size) {
  Planes p = adaptive_planes(op, input, k, output_size);
  Tensor out = new_planes(p, p.g.out, p.compute);
  if (out->numel()) kernel<kernels::adaptive_avg_pool>(input->device())(out, p.x, p.g);
  return finish(p, out, p.g.out);
}

Tensor adaptive_avg_backward(const char* op, size_t k, const Tensor& grad_output,
                             const Tensor& input) {
  FLB_CHECK(grad_output->dim() == input->dim(), op, ": expected grad_output of ", input->dim(),
            " dims, but got ", list_str(grad_output->sizes()));
  DimVector osz(IntList(grad_output->sizes().data() + input->dim() - k, k));
  Planes p = adaptive_planes(op, input, k, osz);
  Tensor go = check_grad(p, grad_output, p.g.out);
  Tensor gi = new_planes(p, p.g.in, p.compute);
  if (gi->numel()) kernel<kernels::adaptive_avg_pool_backward>(input->device())(gi, go, p.g);
  return finish(p, gi, p.g.in);
}

std::tuple<Tensor, Tensor> adaptive_max_any(const char* op, size_t k, const Tensor& input,
                                            IntList output_size) {
  Planes p = adaptive_planes(op, input, k, output_size);
  Tensor out = new_planes(p, p.g.out, p.compute), idx = new_planes(p, p.g.out, ScalarType::Int64);
  if (out->numel()) kernel<kernels::adaptive_max_pool>(input->device())(out, idx, p.x, p.g);
  return {finish(p, out, p.g.out), reshape(idx, out_shape(p, p.g.out))};
}

}  // namespace

#define FLB_MAX_POOL(N)                                                                            \
  Tensor max_pool##N##d(const Tensor& input, IntList kernel_size,                                  \
                        const std::optional<DimVector>& stride, IntList padding, IntList dilation, \
                        bool ceil_mode) {                                                          \
    return std::get<0>(max_pool_any("max_pool" #N "d", N, input, kernel_size, stride, padding,     \
                                    dilation, ceil_mode));                                         \
  }                                                                                                \
  std::tuple<Tensor, Tensor> max_pool##N##d_with_indices(                                          \
      const Tensor& input, IntList kernel_size, const std::optional<DimVector>& stride,            \
      IntList padding, IntList dilation, bool ceil_mode) {                                         \
    return max_pool_any("max_pool" #N "d_with_indices", N, input, kernel_size, stride, padding,    \
                        dilation, ceil_mode);                                                      \
  }                                                                                                \
  Tensor max_unpool##N##d(const Tensor& input, const Tensor& indices, IntList output_size) {       \
    return max_unpool_any("max_unpool" #N "d", N, input, indices, output_size);                    \
  }                                                                                                \
  Tensor adaptive_avg_pool##N##d(const Tensor& input, IntList output_size) {                       \
    return adaptive_avg_any("adaptive_avg_pool" #N "d", N, input, output_size);                    \
  }                                                                                                \
  std::tuple<Tensor, Tensor> adaptive_max_pool##N##d(const Tensor& input, IntList output_size) {   \
    return adaptive_max_any("adaptive_max_pool" #N "d", N, input, output_size);                    \
  }
FLB_MAX_POOL(1)
FLB_MAX_POOL(2)
FLB_MAX_POOL(3)
#undef FLB_MAX_POOL

#define FLB_POOL_BACKWARD(N)                                                                       \
  Tensor max_pool##N##d_with_indices_backward(const Tensor& grad_output, const Tensor& input,      \
                                              IntList, const std::optional<DimVector>&, IntList,   \
                                              IntList, bool, const Tensor& indices) {              \
    return max_pool_backward("max_pool" #N "d_with_indices_backward", N, grad_output, input,       \
                             indices);                                                             \
  }                                                                                                \
  Tensor avg_pool##N##d_backward(const Tensor& grad_output, const Tensor& input,                   \
                                 IntList kernel_size, const std::optional<DimVector>& stride,      \
                                 IntList padding, bool ceil_mode, bool count_include_pad,          \
                                 std::optional<int64_t> divisor_override) {                        \
    return avg_pool_backward("avg_pool" #N "d_backward", N, grad_output, input, kernel_size,       \
                             stride, padding, ceil_mode, count_include_pad, divisor_override);     \
  }                                                                                                \
  Tensor adaptive_avg_pool##N##d_backward(const Tensor& grad_output, const Tensor& input) {        \
    return adaptive_avg_backward("adaptive_avg_pool" #N "d_backward", N, grad_output, input);      \
  }                                                                                                \
  Tensor adaptive_max_pool##N##d_backward(const Tensor& grad_output, const Tensor& input,          \
                                          const Tensor& indices) {                                 \
    return max_pool_backward("adaptive_max_pool" #N "d_backward", N, grad_output, input, indices); \
  }
FLB_POOL_BACKWARD(2)
FLB_POOL_BACKWARD(3)
#undef FLB_POOL_BACKWARD

Tensor avg_pool1d(const Tensor& input, IntList kernel_size, const std::optional<DimVector>& stride,
                  IntList padding, bool ceil_mode, bool count_include_pad) {
  return avg_pool_any("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, std::nullopt);
}
Tensor avg_pool2d(const Tensor& input, IntList kernel_size, const std::optional<DimVector>& stride,
                  IntList padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool_any("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override);
}
Tensor avg_pool3d(const Tensor& input, IntList kernel_size, const std::optional<DimVector>& stride,
                  IntList padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool_any("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override);
}

}  // namespace flambeau::ops
