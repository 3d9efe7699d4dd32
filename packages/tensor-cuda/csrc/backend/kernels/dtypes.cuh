// The element types the CUDA kernels handle, dispatch from a runtime flb_dtype
// to a C++ type, and conversions between any two of them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <flambeau/backend_abi.h>

#include <cstdint>
#include <type_traits>

namespace flambeau::cuda::kernels {

// The type arithmetic on T is carried out in: float for the 16-bit floats.
template <class T>
struct Acc {
  using type = T;
};
template <>
struct Acc<__half> {
  using type = float;
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
};
template <class T>
using acc_t = typename Acc<T>::type;

template <class T>
constexpr bool is_16bit_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// value as a D, through float for the 16-bit floats and as != 0 into bool.
template <class D, class S>
__host__ __device__ inline D convert(S value) {
  if constexpr (std::is_same_v<D, S>) {
    return value;
  } else if constexpr (is_16bit_float<S>) {
    return convert<D>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<D, bool>) {
    return value != S(0);
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(value));
  } else {
    return static_cast<D>(value);
  }
}

// Calls f(T{}) with the C++ type of `dtype`; false for complex and unknown dtypes.
template <class F>
bool dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case FLB_BOOL:
      f(bool{});
      return true;
    case FLB_UINT8:
      f(uint8_t{});
      return true;
    case FLB_INT8:
      f(int8_t{});
      return true;
    case FLB_INT16:
      f(int16_t{});
      return true;
    case FLB_INT32:
      f(int32_t{});
      return true;
    case FLB_INT64:
      f(int64_t{});
      return true;
    case FLB_FLOAT16:
      f(__half{});
      return true;
    case FLB_BFLOAT16:
      f(__nv_bfloat16{});
      return true;
    case FLB_FLOAT32:
      f(float{});
      return true;
    case FLB_FLOAT64:
      f(double{});
      return true;
    default:
      return false;
  }
}

// The element at p, of runtime type `dtype`, as a D (the copy and sum kernels
// read an input of any dtype this way; the branch is the same for every thread).
template <class D>
__device__ inline D load_as(const char* p, int32_t dtype) {
  switch (dtype) {
    case FLB_BOOL:
      return convert<D>(*reinterpret_cast<const bool*>(p));
    case FLB_UINT8:
      return convert<D>(*reinterpret_cast<const uint8_t*>(p));
    case FLB_INT8:
      return convert<D>(*reinterpret_cast<const int8_t*>(p));
    case FLB_INT16:
      return convert<D>(*reinterpret_cast<const int16_t*>(p));
    case FLB_INT32:
      return convert<D>(*reinterpret_cast<const int32_t*>(p));
    case FLB_INT64:
      return convert<D>(*reinterpret_cast<const int64_t*>(p));
    case FLB_FLOAT16:
      return convert<D>(*reinterpret_cast<const __half*>(p));
    case FLB_BFLOAT16:
      return convert<D>(*reinterpret_cast<const __nv_bfloat16*>(p));
    case FLB_FLOAT32:
      return convert<D>(*reinterpret_cast<const float*>(p));
    default:
      return convert<D>(*reinterpret_cast<const double*>(p));
  }
}

// A scalar argument as a T (ints from the integer, floats from the real part).
template <class T>
inline T scalar_as(const flb_scalar& s) {
  if (s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX) return convert<T>(s.real);
  return convert<T>(s.i);
}

}  // namespace flambeau::cuda::kernels
