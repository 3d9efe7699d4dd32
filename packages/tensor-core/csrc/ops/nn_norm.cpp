// Frontends of the normalisation operators. Layer norm and group norm's
// statistics run the row kernels of cpu/nn_norm_kernels.cpp; batch norm's
// per-channel statistics and all per-channel affine steps compose the core's
// reductions and pointwise operators.
#include <cmath>
#include <string>

#include "generated/kernels.h"
#include "generated/ops_nn_norm.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/nn_kernels.h"

namespace flambeau::ops {

namespace {

const OutArg kNew = OutArg::none();

Tensor fmul(const Tensor& a, const Tensor& b) { return mul(a, b, kNew); }
Tensor fadd(const Tensor& a, const Tensor& b) { return add(a, b, Scalar(1), kNew); }
Tensor fsub(const Tensor& a, const Tensor& b) { return sub(a, b, Scalar(1), kNew); }
Tensor num(double v, ScalarType t) { return scalar_tensor(Scalar(v), t); }

void check_float(const Tensor& t, const char* name) {
  if (!is_floating(t->dtype())) fail_dtype(name, t->dtype());
}

// t (1-D, C elements) cast to dtype, viewed as (1, C, 1, ...) for ndim dims.
Tensor per_channel(const Tensor& t, ScalarType dtype, int64_t ndim) {
  DimVector shape(ndim, 1);
  shape[1] = t->numel();
  return reshape(to_dtype(t, dtype), shape);
}

void check_channel_vec(const Tensor& t, int64_t c, const char* what, const char* name) {
  if (!t) return;
  FLB_CHECK(t->numel() == c, name, ": ", what, " should contain ", c, " elements not ", t->numel());
}

// The dims batch norm reduces: all but 1.
DimVector stat_dims(int64_t ndim) {
  DimVector d;
  for (int64_t i = 0; i < ndim; ++i)
    if (i != 1) d.push_back(i);
  return d;
}

struct LnShape {
  int64_t rows = 1, n = 1;
  DimVector stat_shape;  // leading dims, then 1 for each normalized dim
};

LnShape check_layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                         const Tensor& bias, const char* name) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input->dim();
  FLB_CHECK(
      k >= 1, name, ": Expected normalized_shape to be at least 1-dimensional, i.e., ",
      "containing at least one element, but got normalized_shape = ", shape_str(normalized_shape));
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input->size(nd - k + i) == normalized_shape[i];
  if (!ok) {
    std::string want = "(*";
    for (int64_t v : normalized_shape) want += ", " + std::to_string(v);
    fail(name, ": Given normalized_shape=", shape_str(normalized_shape),
         ", expected input with shape ", want, "), but got input of size ",
         shape_str(input->sizes()));
  }
  FLB_CHECK(!weight || weight->sizes() == normalized_shape, name,
            ": Expected weight to be of same shape as normalized_shape, but got weight of shape ",
            shape_str(weight ? weight->sizes() : IntList{}),
            " and normalized_shape = ", shape_str(normalized_shape));
  FLB_CHECK(!bias || bias->sizes() == normalized_shape, name,
            ": Expected bias to be of same shape as normalized_shape, but got bias of shape ",
            shape_str(bias ? bias->sizes() : IntList{}),
            " and normalized_shape = ", shape_str(normalized_shape));
  check_float(input, name);
  LnShape s;
  for (int64_t i = 0; i < nd; ++i) {
    if (i < nd - k) {
      s.rows *= input->size(i);
      s.stat_shape.push_back(input->size(i));
    } else {
      s.n *= input->size(i);
      s.stat_shape.push_back(1);
    }
  }
  return s;
}

Tensor contiguous_as(const Tensor& t, ScalarType dtype) {
  return t ? contiguous(to_dtype(t, dtype)) : Tensor();
}

bool mask_at(IntList m, size_t i) { return m.size() > i && m[i] != 0; }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntList normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps) {
  LnShape s = check_layer_norm(input, normalized_shape, weight, bias, "native_layer_norm");
  const ScalarType t = input->dtype();
  Tensor out = empty(input->sizes(), t, input->device());
  Tensor mean = empty(s.stat_shape, t, input->device());
  Tensor rstd = empty(s.stat_shape, t, input->device());
  if (input->numel() != 0) {
    kernel<kernels::native_layer_norm>(input->device())(out, mean, rstd, contiguous(input),
                                                        contiguous_as(weight, t),
                                                        contiguous_as(bias, t), s.rows, s.n, eps);
  }
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, IntList normalized_shape, const Tensor& mean,
    const Tensor& rstd, const Tensor& weight, const Tensor& bias, IntList output_mask) {
  const char* name = "native_layer_norm_backward";
  LnShape s = check_layer_norm(input, normalized_shape, weight, bias, name);
  FLB_CHECK(grad_out->sizes() == input->sizes(), name, ": grad_out of shape ",
            shape_str(grad_out->sizes()), " does not match input of shape ",
            shape_str(input->sizes()));
  FLB_CHECK(mean->numel() == s.rows && rstd->numel() == s.rows, name, ": mean and rstd need ",
            s.rows, " elements, got ", mean->numel(), " and ", rstd->numel());
  const ScalarType t = input->dtype();
  Tensor gi = mask_at(output_mask, 0) ? empty(input->sizes(), t, input->device()) : Tensor();
  Tensor gw = mask_at(output_mask, 1) ? empty(normalized_shape, t, input->device()) : Tensor();
  Tensor gb = mask_at(output_mask, 2) ? empty(normalized_shape, t, input->device()) : Tensor();
  if (input->numel() == 0) {
    if (gw) fill_(gw, Scalar(0.0));
    if (gb) fill_(gb, Scalar(0.0));
  } else if (gi || gw || gb) {
    kernel<kernels::native_layer_norm_backward>(input->device())(
        gi, gw, gb, contiguous_as(grad_out, t), contiguous(input), contiguous_as(mean, t),
        contiguous_as(rstd, t), contiguous_as(weight, t), s.rows, s.n);
  }
  return {gi, gw, gb};
}

Tensor layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool cudnn_enable) {
  (void)cudnn_enable;
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps) {
  const char* name = "native_batch_norm";
  FLB_CHECK(input->dim() >= 2, name, ": expected an input with at least 2 dims (N, C, ...), ",
            "got shape ", shape_str(input->sizes()));
  check_float(input, name);
  const int64_t nd = input->dim(), c = input->size(1);
  check_channel_vec(weight, c, "weight", name);
  check_channel_vec(bias, c, "bias", name);
  check_channel_vec(running_mean, c, "running_mean", name);
  check_channel_vec(running_var, c, "running_var", name);
  const ScalarType t = input->dtype();
  Tensor mean, invstd, save_mean, save_invstd;
  if (training) {
    const DimVector dims = stat_dims(nd);
    const int64_t m = input->numel() / std::max<int64_t>(c, 1);
    mean = ops::mean(input, dims, false, std::nullopt, kNew);
    Tensor var = ops::var(input, dims, Scalar(0), false, kNew);
    invstd = rsqrt(fadd(var, num(eps, t)), kNew);
    save_mean = mean;
    save_invstd = invstd;
    if (running_mean) {
      Tensor upd =
          fadd(fmul(to_dtype(running_mean, t), num(1 - momentum, t)), fmul(mean, num(momentum, t)));
      copy_into(running_mean, upd);
    }
    if (running_var) {
      // The running variance is unbiased: n / (n - 1) times the batch's.
      const double unbias = m > 1 ? static_cast<double>(m) / (m - 1) : INFINITY;
      Tensor upd = fadd(fmul(to_dtype(running_var, t), num(1 - momentum, t)),
                        fmul(var, num(momentum * unbias, t)));
      copy_into(running_var, upd);
    }
  } else {
    FLB_CHECK(running_mean && running_var, name,
              ": running_mean and running_var must be defined in evaluation mode");
    mean = to_dtype(running_mean, t);
    invstd = rsqrt(fadd(to_dtype(running_var, t), num(eps, t)), kNew);
    save_mean = empty({0}, t, input->device());
    save_invstd = empty({0}, t, input->device());
  }
  Tensor scale = weight ? fmul(invstd, to_dtype(weight, t)) : invstd;
  Tensor out = fmul(fsub(input, per_channel(mean, t, nd)), per_channel(scale, t, nd));
  if (bias) out = fadd(out, per_channel(bias, t, nd));
  return {contiguous(out), save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Tensor& weight, const Tensor& running_mean,
    const Tensor& running_var, const Tensor& save_mean, const Tensor& save_invstd, bool train,
    double eps, IntList output_mask) {
  const char* name = "native_batch_norm_backward";
  FLB_CHECK(input->dim() >= 2, name, ": expected an input with at least 2 dims, got shape ",
            shape_str(input->sizes()));
  FLB_CHECK(grad_out->sizes() == input->sizes(), name, ": grad_out of shape ",
            shape_str(grad_out->sizes()), " does not match input of shape ",
            shape_str(input->sizes()));
  check_float(input, name);
  const int64_t nd = input->dim(), c = input->size(1);
  const ScalarType t = input->dtype();
  Tensor mean, invstd;
  if (train) {
    FLB_CHECK(save_mean && save_invstd && save_mean->numel() == c && save_invstd->numel() == c,
              name, ": training mode needs save_mean and save_invstd of ", c, " elements");
    mean = to_dtype(save_mean, t);
    invstd = to_dtype(save_invstd, t);
  } else {
    FLB_CHECK(running_mean && running_var, name,
              ": running_mean and running_var must be defined in evaluation mode");
    mean = to_dtype(running_mean, t);
    invstd = rsqrt(fadd(to_dtype(running_var, t), num(eps, t)), kNew);
  }
  check_channel_vec(weight, c, "weight", name);
  const DimVector dims = stat_dims(nd);
  Tensor dy = to_dtype(grad_out, t);
  Tensor xhat = fmul(fsub(input, per_channel(mean, t, nd)), per_channel(invstd, t, nd));
  Tensor sum_dy = sum(dy, dims, false, std::nullopt, kNew);
  Tensor sum_dy_xhat = sum(fmul(dy, xhat), dims, false, std::nullopt, kNew);
  Tensor gi, gw, gb;
  if (mask_at(output_mask, 0)) {
    Tensor k = weight ? fmul(invstd, to_dtype(weight, t)) : invstd;
    if (train) {
      const double m = static_cast<double>(input->numel() / std::max<int64_t>(c, 1));
      Tensor inner = fsub(fsub(dy, per_channel(fmul(sum_dy, num(1 / m, t)), t, nd)),
                          fmul(xhat, per_channel(fmul(sum_dy_xhat, num(1 / m, t)), t, nd)));
      gi = contiguous(fmul(inner, per_channel(k, t, nd)));
    } else {
      gi = contiguous(fmul(dy, per_channel(k, t, nd)));
    }
  }
  if (mask_at(output_mask, 1)) gw = sum_dy_xhat;
  if (mask_at(output_mask, 2)) gb = sum_dy;
  return {gi, gw, gb};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  return std::get<0>(
      native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

namespace {

void check_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t n,
                      int64_t c, int64_t hxw, int64_t group, const char* name) {
  check_float(input, name);
  FLB_CHECK(group > 0 && c % group == 0, name, ": Expected number of channels in input to be ",
            "divisible by num_groups, but got input of shape ", shape_str(input->sizes()),
            " and num_groups=", group);
  FLB_CHECK(input->numel() == n * c * hxw, name, ": Expected input of ", n * c * hxw,
            " elements (N=", n, ", C=", c, ", HxW=", hxw, "), got shape ",
            shape_str(input->sizes()));
  FLB_CHECK(!weight || weight->numel() == c, name, ": Expected weight to be a vector of size ",
            "equal to the number of channels in input, but got weight of shape ",
            shape_str(weight ? weight->sizes() : IntList{}), " and input of shape ",
            shape_str(input->sizes()));
  FLB_CHECK(!bias || bias->numel() == c, name, ": Expected bias to be a vector of size equal ",
            "to the number of channels in input, but got bias of shape ",
            shape_str(bias ? bias->sizes() : IntList{}), " and input of shape ",
            shape_str(input->sizes()));
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps) {
  const char* name = "native_group_norm";
  check_group_norm(input, weight, bias, N, C, HxW, group, name);
  const ScalarType t = input->dtype();
  const int64_t rows = N * group, n = group > 0 ? C / group * HxW : 0;
  Tensor y = empty(input->sizes(), t, input->device());
  Tensor mean = empty({N, group}, t, input->device());
  Tensor rstd = empty({N, group}, t, input->device());
  if (input->numel() == 0) return {y, mean, rstd};
  kernel<kernels::native_layer_norm>(input->device())(y, mean, rstd, contiguous(input), Tensor(),
                                                      Tensor(), rows, n, eps);
  if (weight || bias) {
    Tensor y3 = view(y, DimVector{N, C, HxW});
    if (weight) y3 = fmul(y3, reshape(to_dtype(weight, t), DimVector{1, C, 1}));
    if (bias) y3 = fadd(y3, reshape(to_dtype(bias, t), DimVector{1, C, 1}));
    y = reshape(y3, input->sizes());
  }
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
    const Tensor& weight, int64_t N, int64_t C, int64_t HxW, int64_t group, IntList output_mask) {
  const char* name = "native_group_norm_backward";
  check_group_norm(input, weight, Tensor(), N, C, HxW, group, name);
  FLB_CHECK(grad_out->sizes() == input->sizes(), name, ": grad_out of shape ",
            shape_str(grad_out->sizes()), " does not match input of shape ",
            shape_str(input->sizes()));
  FLB_CHECK(mean->numel() == N * group && rstd->numel() == N * group, name,
            ": mean and rstd need N * group = ", N * group, " elements, got ", mean->numel(),
            " and ", rstd->numel());
  const ScalarType t = input->dtype();
  const int64_t rows = N * group, n = C / group * HxW;
  Tensor dy3 = reshape(to_dtype(grad_out, t), DimVector{N, C, HxW});
  Tensor gi, gw, gb;
  if (mask_at(output_mask, 0)) {
    gi = empty(input->sizes(), t, input->device());
    if (input->numel() != 0) {
      Tensor dxhat = weight ? fmul(dy3, reshape(to_dtype(weight, t), DimVector{1, C, 1})) : dy3;
      kernel<kernels::native_layer_norm_backward>(input->device())(
          gi, Tensor(), Tensor(), contiguous(dxhat), contiguous(input), contiguous_as(mean, t),
          contiguous_as(rstd, t), Tensor(), rows, n);
    }
  }
  if (mask_at(output_mask, 1) || mask_at(output_mask, 2)) {
    const DimVector dims{0, 2};
    if (mask_at(output_mask, 1)) {
      Tensor xg = reshape(to_dtype(input, t), DimVector{N, group, n});
      Tensor xhat = fmul(fsub(xg, reshape(to_dtype(mean, t), DimVector{N, group, 1})),
                         reshape(to_dtype(rstd, t), DimVector{N, group, 1}));
      gw = sum(fmul(dy3, reshape(xhat, DimVector{N, C, HxW})), dims, false, std::nullopt, kNew);
    }
    if (mask_at(output_mask, 2)) gb = sum(dy3, dims, false, std::nullopt, kNew);
  }
  return {gi, gw, gb};
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  FLB_CHECK(input->dim() >= 2, "group_norm: Expected at least 2 dimensions for input tensor but ",
            "received ", input->dim());
  const int64_t n = input->size(0), c = input->size(1);
  const int64_t hxw = c == 0 || n == 0 ? 0 : input->numel() / (n * c);
  return std::get<0>(native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps));
}

Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled) {
  (void)cudnn_enabled;
  const char* name = "instance_norm";
  FLB_CHECK(input->dim() >= 2, name, ": expected an input with at least 2 dims (N, C, ...), ",
            "got shape ", shape_str(input->sizes()));
  FLB_CHECK(use_input_stats || (running_mean && running_var), name, ": Expected running_mean and ",
            "running_var to be defined when use_input_stats is false");
  const int64_t n = input->size(0), c = input->size(1);
  // Each sample's channels become channels of one batch of size 1 (as PyTorch).
  DimVector shape(input->sizes());
  shape[0] = 1;
  shape[1] = n * c;
  auto repeat = [&](const Tensor& v) {
    return v ? contiguous(reshape(expand(unsqueeze(v, 0), DimVector{n, c}), DimVector{n * c}))
             : Tensor();
  };
  Tensor rm = repeat(running_mean), rv = repeat(running_var);
  Tensor out = std::get<0>(native_batch_norm(reshape(input, shape), repeat(weight), repeat(bias),
                                             rm, rv, use_input_stats, momentum, eps));
  // Running stats take the batch average of the per-sample updates.
  if (running_mean)
    copy_into(running_mean,
              mean(view(rm, DimVector{n, c}), DimVector{0}, false, std::nullopt, kNew));
  if (running_var)
    copy_into(running_var,
              mean(view(rv, DimVector{n, c}), DimVector{0}, false, std::nullopt, kNew));
  return reshape(out, input->sizes());
}

}  // namespace flambeau::ops
