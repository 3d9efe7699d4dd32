// More reductions over dims through the helper of reduce.cuh, each with the CPU
// kernel's result (cpu/reduce_kernels.cpp, cpu/reduce_moments.cpp):
//   all, any:       tensors [out (bool, or uint8 for uint8 input), in (any dtype)]
//   count_nonzero:  tensors [out (int64), in (any dtype)]
//   nansum:         tensors [out, in] of one dtype (NaN skipped)
//   nanmean:        tensors [out, in] of one floating dtype (mean of the non-NaN)
//   norm:           tensors [out, in] of one floating dtype; scalars [p]
//   logsumexp:      tensors [out, in] of one floating dtype
//   var:            tensors [var_out, mean_out?, in]; scalars [correction];
//                   ints [dims..., take_sqrt]
// (the others take ints [dims...]). norm, logsumexp and var accumulate in double
// as the CPU does; logsumexp folds (max, sum of exp(x - max)) pairs and var
// (count, mean, sum of squared deviations) triples (Chan et al.'s pairwise
// update), single passes whose infinities and NaN end as the CPU's two passes
// do. Every order depends on the shapes alone: deterministic.
#include <cmath>
#include <cuda/std/limits>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/reduce.cuh"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
__device__ inline bool is_nan(A a) {
  if constexpr (std::is_floating_point_v<A>)
    return a != a;
  else
    return false;
}

// all / any into out type O (bool or uint8).
template <class T, class O, bool IsAll>
struct AllAny {
  using acc = int32_t;
  __device__ acc identity() const { return IsAll ? 1 : 0; }
  __device__ acc element(acc_t<T> v, int64_t) const { return v != acc_t<T>(0) ? 1 : 0; }
  __device__ acc combine(acc a, acc b) const { return IsAll ? (a & b) : (a | b); }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    *reinterpret_cast<O*>(outs[0] + off[0]) = static_cast<O>(a != 0);
  }
};

template <class T>
struct CountNonzero {
  using acc = int64_t;
  __device__ acc identity() const { return 0; }
  __device__ acc element(acc_t<T> v, int64_t) const { return v != acc_t<T>(0) ? 1 : 0; }
  __device__ acc combine(acc a, acc b) const { return a + b; }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    *reinterpret_cast<int64_t*>(outs[0] + off[0]) = a;
  }
};

// Sums accumulate as the plugin's sum does: double for float64, float for the
// other floats, int64 for integers.
template <class T>
using sum_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                     std::conditional_t<std::is_integral_v<T>, int64_t, float>>;

template <class T>
struct NanSum {
  using acc = sum_acc_t<T>;
  __device__ acc identity() const { return acc(0); }
  __device__ acc element(acc_t<T> v, int64_t) const {
    return is_nan(v) ? acc(0) : static_cast<acc>(v);
  }
  __device__ acc combine(acc a, acc b) const { return a + b; }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a);
  }
};

template <class S>
struct SumCount {
  S sum;
  int64_t n;
};

template <class T>
struct NanMean {
  using acc = SumCount<sum_acc_t<T>>;
  __device__ acc identity() const { return acc{0, 0}; }
  __device__ acc element(acc_t<T> v, int64_t) const {
    return is_nan(v) ? acc{0, 0} : acc{static_cast<sum_acc_t<T>>(v), 1};
  }
  __device__ acc combine(acc a, acc b) const { return acc{a.sum + b.sum, a.n + b.n}; }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    using S = sum_acc_t<T>;
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a.sum / static_cast<S>(a.n));
  }
};

// Vector norms, accumulated in double: p = inf / -inf (max / min of |x|, NaN
// propagating), 0 (count of nonzeros), 1, 2, or any other p.
enum class NormKind { kMax, kMin, kZero, kOne, kTwo, kOther };

template <class T>
struct Norm {
  using acc = double;
  NormKind kind;
  double p;
  __device__ acc identity() const {
    return kind == NormKind::kMin ? ::cuda::std::numeric_limits<double>::infinity() : 0.0;
  }
  __device__ acc element(acc_t<T> v, int64_t) const {
    const double m = fabs(static_cast<double>(v));
    switch (kind) {
      case NormKind::kZero:
        return m != 0 ? 1.0 : 0.0;
      case NormKind::kTwo:
        return m * m;
      case NormKind::kOther:
        return pow(m, p);
      default:
        return m;
    }
  }
  __device__ acc combine(acc a, acc b) const {
    if (kind == NormKind::kMax || kind == NormKind::kMin) {
      if (a != a || b != b) return a != a ? a : b;
      return kind == NormKind::kMax ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    if (kind == NormKind::kTwo) a = sqrt(a);
    if (kind == NormKind::kOther) a = pow(a, 1.0 / p);
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a);
  }
};

// logsumexp: (m, s) with s = sum of exp(x - m) over the elements seen, m their
// max (NaN wins). An infinite or NaN m ends as the CPU's max(x) + log(sum(exp(x
// - 0))): NaN stays NaN, +inf gives +inf, -inf (all -inf, or none) gives -inf.
struct MaxSum {
  double m, s;
};

template <class T>
struct LogSumExp {
  using acc = MaxSum;
  __device__ acc identity() const {
    return acc{-::cuda::std::numeric_limits<double>::infinity(), 0.0};
  }
  __device__ acc element(acc_t<T> v, int64_t) const { return acc{static_cast<double>(v), 1.0}; }
  __device__ acc combine(acc a, acc b) const {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    const double m = b.m > a.m ? b.m : a.m;
    if (isinf(m)) return acc{m, 0.0};  // the end result is m itself
    return acc{m, a.s * exp(a.m - m) + b.s * exp(b.m - m)};
  }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    const double r = (a.m != a.m || isinf(a.m)) ? a.m : log(a.s) + a.m;
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(r);
  }
};

// var (and std, and the mean): count, mean and m2 (the sum of squared
// deviations from the mean) in double. A non-finite mean gives NaN, as the
// CPU's deviations from it (inf - inf) do; an empty slice a NaN mean.
struct Moments {
  double n, mean, m2;
};

template <class T>
struct Var {
  using acc = Moments;
  double correction;
  bool take_sqrt;
  __device__ acc identity() const { return acc{0.0, 0.0, 0.0}; }
  __device__ acc element(acc_t<T> v, int64_t) const {
    return acc{1.0, static_cast<double>(v), 0.0};
  }
  __device__ acc combine(acc a, acc b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n, delta = b.mean - a.mean;
    return acc{n, a.mean + delta * (b.n / n), a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
  }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    const double nan = ::cuda::std::numeric_limits<double>::quiet_NaN();
    const double mean = a.n == 0 ? nan : a.mean;
    const double div = a.n - correction > 0 ? a.n - correction : 0.0;
    double v = isfinite(mean) ? a.m2 / div : nan;
    if (take_sqrt) v = sqrt(v);
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(v);
    if (outs[1] != nullptr) *reinterpret_cast<T*>(outs[1] + off[1]) = convert<T>(mean);
  }
};

// Reads dims from ints[0, n_dims) into reduced[]; false for a bad dim.
bool read_dims(const flb_kernel_call* c, int n_dims, int ndim, bool* reduced) {
  for (int i = 0; i < n_dims; ++i) {
    const int64_t d = c->ints[i];
    if (d < 0 || d >= ndim) return false;
    reduced[d] = true;
  }
  return true;
}

double scalar_value(const flb_scalar& s) {
  return s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX ? s.real
                                                                    : static_cast<double>(s.i);
}

// The common checks of tensors [out, in]: two of them, out of in's rank.
flb_status check_pair(const flb_kernel_call* c, bool* reduced) {
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  if (out.ndim != in.ndim || in.ndim > 64)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "out must have in's rank");
  if (!read_dims(c, c->n_ints, in.ndim, reduced))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad dim");
  return FLB_OK;
}

template <class T, class R>
flb_status run_one(const flb_kernel_call* c, const bool* reduced, int64_t out_item, const R& r) {
  const flb_tensor* outs[1] = {&c->tensors[0]};
  const int64_t item[1] = {out_item};
  return launch_reduce<T, 1>(c, c->tensors[1], outs, item, reduced, r);
}

}  // namespace

flb_status all_any(void* ctx, const flb_kernel_call* c) {
  const bool is_all = *static_cast<const ReduceExtraOp*>(ctx) == ReduceExtraOp::kAll;
  bool reduced[64] = {};
  if (flb_status s = check_pair(c, reduced); s != FLB_OK) return s;
  const int32_t out_dtype = c->tensors[0].dtype;
  if (out_dtype != FLB_BOOL && out_dtype != FLB_UINT8) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[1].dtype, [&](auto tag) {
    using T = decltype(tag);
    if (out_dtype == FLB_BOOL)
      status = is_all ? run_one<T>(c, reduced, 1, AllAny<T, bool, true>{})
                      : run_one<T>(c, reduced, 1, AllAny<T, bool, false>{});
    else
      status = is_all ? run_one<T>(c, reduced, 1, AllAny<T, uint8_t, true>{})
                      : run_one<T>(c, reduced, 1, AllAny<T, uint8_t, false>{});
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status count_nonzero(void*, const flb_kernel_call* c) {
  bool reduced[64] = {};
  if (flb_status s = check_pair(c, reduced); s != FLB_OK) return s;
  if (c->tensors[0].dtype != FLB_INT64) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[1].dtype, [&](auto tag) {
    using T = decltype(tag);
    status = run_one<T>(c, reduced, 8, CountNonzero<T>{});
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status reduce_extra(void* ctx, const flb_kernel_call* c) {
  const ReduceExtraOp op = *static_cast<const ReduceExtraOp*>(ctx);
  bool reduced[64] = {};
  if (flb_status s = check_pair(c, reduced); s != FLB_OK) return s;
  const int32_t dtype = c->tensors[1].dtype;
  if (c->tensors[0].dtype != dtype) return unsupported_dtypes(c);
  if (op == ReduceExtraOp::kNanSum) {
    flb_status status = FLB_OK;
    const bool known = dispatch(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>)
        status = unsupported_dtypes(c);  // the core sums bool as int64
      else
        status = run_one<T>(c, reduced, sizeof(T), NanSum<T>{});
    });
    return known ? status : unsupported_dtypes(c);
  }
  NormKind kind = NormKind::kTwo;
  double p = 2;
  if (op == ReduceExtraOp::kNorm) {
    if (c->n_scalars < 1) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing p");
    p = scalar_value(c->scalars[0]);
    kind = std::isinf(p) ? (p > 0 ? NormKind::kMax : NormKind::kMin)
           : p == 0      ? NormKind::kZero
           : p == 1      ? NormKind::kOne
           : p == 2      ? NormKind::kTwo
                         : NormKind::kOther;
  }
  return with_float_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceExtraOp::kNanMean:
        return run_one<T>(c, reduced, sizeof(T), NanMean<T>{});
      case ReduceExtraOp::kNorm:
        return run_one<T>(c, reduced, sizeof(T), Norm<T>{kind, p});
      case ReduceExtraOp::kLogSumExp:
        return run_one<T>(c, reduced, sizeof(T), LogSumExp<T>{});
      default:
        return unsupported_dtypes(c);
    }
  });
}

flb_status var(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 3 || c->n_scalars < 1 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op,
                       "expected tensors [var, mean?, in], a correction and take_sqrt");
  const flb_tensor &var_out = c->tensors[0], &in = c->tensors[2];
  const bool has_mean = present(c, 1);
  if (var_out.dtype != in.dtype || (has_mean && c->tensors[1].dtype != in.dtype))
    return unsupported_dtypes(c);
  if (var_out.ndim != in.ndim || (has_mean && c->tensors[1].ndim != in.ndim) || in.ndim > 64)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "outputs must have in's rank");
  bool reduced[64] = {};
  if (!read_dims(c, c->n_ints - 1, in.ndim, reduced))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad dim");
  const bool take_sqrt = c->ints[c->n_ints - 1] != 0;
  const double correction = scalar_value(c->scalars[0]);
  // An absent mean walks with var's strides and is never written.
  flb_tensor mean_or_var = has_mean ? c->tensors[1] : var_out;
  if (!has_mean) mean_or_var.data = nullptr;
  const flb_tensor* outs[2] = {&var_out, &mean_or_var};
  return with_float_dtype(c, in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t item[2] = {sizeof(T), sizeof(T)};
    return launch_reduce<T, 2>(c, in, outs, item, reduced, Var<T>{correction, take_sqrt});
  });
}

}  // namespace flambeau::cuda::kernels
