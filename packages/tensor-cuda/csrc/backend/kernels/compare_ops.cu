// Comparisons (eq, ne, lt, le, gt, ge), logical operators (logical_and, _or,
// _xor, _not) and value tests (isnan, isinf, isfinite, isposinf, isneginf,
// isclose): a bool out from inputs of any real dtype or bool (the core's promoted
// compute dtype), as the CPU kernels; and where (out = cond ? a : b, cond bool).
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
struct Compare {
  CompareOp op;
  __device__ bool operator()(A a, A b) const {
    switch (op) {
      case CompareOp::kEq:
        return a == b;
      case CompareOp::kNe:
        return a != b;
      case CompareOp::kLt:
        return a < b;
      case CompareOp::kLe:
        return a <= b;
      case CompareOp::kGt:
        return a > b;
      case CompareOp::kGe:
        return a >= b;
      case CompareOp::kAnd:
        return (a != A(0)) && (b != A(0));
      case CompareOp::kOr:
        return (a != A(0)) || (b != A(0));
      case CompareOp::kXor:
        return (a != A(0)) != (b != A(0));
      default:
        break;  // the unary tests and isclose have functors of their own
    }
    return false;
  }
};

// The unary tests; integers and bool are finite and never NaN.
template <class A>
struct ValueTest {
  CompareOp op;
  __device__ bool operator()(A x) const {
    if constexpr (std::is_floating_point_v<A>) {
      switch (op) {
        case CompareOp::kIsNan:
          return x != x;
        case CompareOp::kIsInf:
          return isinf(x);
        case CompareOp::kIsFinite:
          return isfinite(x);
        case CompareOp::kIsPosInf:
          return isinf(x) && x > A(0);
        case CompareOp::kIsNegInf:
          return isinf(x) && x < A(0);
        default:
          break;
      }
      return !(x != A(0));  // kNot
    } else {
      switch (op) {
        case CompareOp::kIsFinite:
          return true;
        case CompareOp::kNot:
          return !(x != A(0));
        default:
          return false;
      }
    }
  }
};

// |a - b| <= atol + rtol * |b|, equal values always close, NaN close to NaN only
// with equal_nan; integers compare in double, as the CPU does.
template <class A>
struct IsClose {
  double rtol, atol;
  bool equal_nan;
  __device__ bool operator()(A a, A b) const {
    if (a == b) return true;
    if constexpr (std::is_same_v<A, bool>) {
      return false;
    } else if constexpr (std::is_integral_v<A>) {
      const double err = fabs(static_cast<double>(a) - static_cast<double>(b));
      return err <= atol + fabs(rtol * static_cast<double>(b));
    } else {
      const bool an = a != a, bn = b != b;
      if (an || bn) return equal_nan && an && bn;
      const A err = fabs(a - b);
      const A allowed = static_cast<A>(atol) + fabs(static_cast<A>(rtol) * fabs(b));
      return isfinite(err) && err <= allowed;
    }
  }
};

template <class T, class Index>
__global__ void where_kernel(StridedIndex<4> ix, char* out, const char* cond, const char* a,
                             const char* b, Index n) {
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[4];
    ix.offsets(i, off);
    const bool c = *reinterpret_cast<const bool*>(cond + off[1]);
    *reinterpret_cast<T*>(out + off[0]) = *reinterpret_cast<const T*>(c ? a + off[2] : b + off[3]);
  }
}

}  // namespace

flb_status compare(void* ctx, const flb_kernel_call* c) {
  const CompareOp op = *static_cast<const CompareOp*>(ctx);
  const bool unary = op >= CompareOp::kNot && op != CompareOp::kIsClose;
  const int nin = unary ? 1 : 2;
  if (c->n_tensors != nin + 1 || c->tensors[0].dtype != FLB_BOOL ||
      !inputs_dtype(c, c->tensors[1].dtype))
    return unsupported_dtypes(c);
  if (op == CompareOp::kIsClose && c->n_scalars != 3)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected rtol, atol and equal_nan");
  flb_status status = FLB_OK;
  bool known = dispatch(c->tensors[1].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if (unary) {
      status = launch_elementwise_to<bool, T, 1>(c, ValueTest<A>{op});
    } else if (op == CompareOp::kIsClose) {
      const IsClose<A> close{c->scalars[0].real, c->scalars[1].real, c->scalars[2].i != 0};
      status = launch_elementwise_to<bool, T, 2>(c, close);
    } else {
      status = launch_elementwise_to<bool, T, 2>(c, Compare<A>{op});
    }
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status where(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 4 || c->tensors[1].dtype != FLB_BOOL ||
      c->tensors[2].dtype != c->tensors[0].dtype || c->tensors[3].dtype != c->tensors[0].dtype)
    return unsupported_dtypes(c);
  const flb_tensor& out = c->tensors[0];
  for (int k = 1; k < 4; ++k)
    if (c->tensors[k].ndim != out.ndim)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
  const int64_t n = numel(out);
  if (n == 0) return FLB_OK;
  flb_status status = FLB_OK;
  bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t* strides[4] = {out.strides, c->tensors[1].strides, c->tensors[2].strides,
                                 c->tensors[3].strides};
    const int64_t item[4] = {sizeof(T), 1, sizeof(T), sizeof(T)};
    StridedIndex<4> ix;
    if (!make_index<4>(out.ndim, out.sizes, strides, item, &ix)) {
      status = kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
      return;
    }
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    char* o = static_cast<char*>(out.data);
    auto p = [&](int k) { return static_cast<const char*>(c->tensors[k].data); };
    if (fits_32bit_index(ix, n, sizeof(T)))
      where_kernel<T, int32_t><<<blocks_for(n), kThreads, 0, stream>>>(ix, o, p(1), p(2), p(3),
                                                                       static_cast<int32_t>(n));
    else
      where_kernel<T, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(ix, o, p(1), p(2), p(3), n);
    status = launch_status(c->op);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
