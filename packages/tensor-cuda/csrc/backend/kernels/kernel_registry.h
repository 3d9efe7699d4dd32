// How the plugin's kernels are registered with the core: each group of kernels keeps a
// table of Registrations (the kernel table's name, the function, its context and the
// dtypes of the call's first tensor it serves) and hands it to register_table. The
// groups' tables: register_kernels.cpp (the first kernels), elementwise_math.cpp,
// counting_sampling_registry.cpp, linalg_fft_registry.cpp.
#pragma once
#include <flambeau/backend_abi.h>

#include <cstddef>
#include <cstdint>

namespace flambeau::cuda::kernels {

// A set of dtypes, as a range of the ABI's FLB_* dtype codes.
struct DtypeSet {
  const int32_t* begin;
  const int32_t* end;
};

template <size_t N>
constexpr DtypeSet dtype_set(const int32_t (&codes)[N]) {
  return {codes, codes + N};
}

namespace dtype_codes {
inline constexpr int32_t kReal[] = {FLB_BOOL,  FLB_UINT8,   FLB_INT8,     FLB_INT16,   FLB_INT32,
                                    FLB_INT64, FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
inline constexpr int32_t kFloat[] = {FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
inline constexpr int32_t kInteger[] = {FLB_UINT8, FLB_INT8, FLB_INT16, FLB_INT32, FLB_INT64};
inline constexpr int32_t kIntegerBool[] = {FLB_BOOL,  FLB_UINT8, FLB_INT8,
                                           FLB_INT16, FLB_INT32, FLB_INT64};
inline constexpr int32_t kNumeric[] = {FLB_UINT8,    FLB_INT8,    FLB_INT16,
                                       FLB_INT32,    FLB_INT64,   FLB_FLOAT16,
                                       FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
inline constexpr int32_t kCompute[] = {FLB_FLOAT32, FLB_FLOAT64};
inline constexpr int32_t kIndex[] = {FLB_INT32, FLB_INT64};
inline constexpr int32_t kInt64[] = {FLB_INT64};
inline constexpr int32_t kBool[] = {FLB_BOOL};
inline constexpr int32_t kAny[] = {FLB_ANY_DTYPE};
inline constexpr int32_t kComplex[] = {FLB_COMPLEX64, FLB_COMPLEX128};
}  // namespace dtype_codes

// Every real dtype; the floating ones (16-bit ones compute in float); the integers; the
// integers and bool; the integers and floats (not bool); float32 and float64 (the
// compute dtypes of pooling, convolution, linear algebra); the index dtypes int32 and
// int64; int64 alone; bool alone (an operator found by its bool out); any dtype (an
// operator whose kernel reads the dtypes itself); complex64 and complex128.
inline constexpr DtypeSet kReal = dtype_set(dtype_codes::kReal);
inline constexpr DtypeSet kFloat = dtype_set(dtype_codes::kFloat);
inline constexpr DtypeSet kInteger = dtype_set(dtype_codes::kInteger);
inline constexpr DtypeSet kIntegerBool = dtype_set(dtype_codes::kIntegerBool);
inline constexpr DtypeSet kNumeric = dtype_set(dtype_codes::kNumeric);
inline constexpr DtypeSet kCompute = dtype_set(dtype_codes::kCompute);
inline constexpr DtypeSet kIndex = dtype_set(dtype_codes::kIndex);
inline constexpr DtypeSet kInt64 = dtype_set(dtype_codes::kInt64);
inline constexpr DtypeSet kBool = dtype_set(dtype_codes::kBool);
inline constexpr DtypeSet kAny = dtype_set(dtype_codes::kAny);
inline constexpr DtypeSet kComplex = dtype_set(dtype_codes::kComplex);

// Every value of an operator enum (0 to Last), each at a fixed address: the contexts of
// a function that serves several operators (ops[Op::kX] is kX's).
template <class Op, Op Last>
struct AllOps {
  static constexpr int kCount = static_cast<int>(Last) + 1;
  Op ops[kCount];
  constexpr AllOps() : ops() {
    for (int i = 0; i < kCount; ++i) ops[i] = static_cast<Op>(i);
  }
  constexpr const void* operator[](Op op) const { return &ops[static_cast<int>(op)]; }
};

struct Registration {
  const char* name;  // the kernel table's name
  flb_kernel_fn fn;  // the function
  const void* ctx;   // its context: the operator, for functions that serve several
  DtypeSet dtypes;   // the dtypes of the call's first tensor
};

// Registers every kernel of a table for every dtype it names; the first refusal stops
// it and is returned.
template <size_t N>
flb_status register_table(const flb_core_api* core, int32_t type, const Registration (&table)[N]) {
  for (const Registration& r : table)
    for (const int32_t* d = r.dtypes.begin; d != r.dtypes.end; ++d)
      if (flb_status s = core->register_kernel(type, r.name, *d, r.fn, const_cast<void*>(r.ctx));
          s != FLB_OK)
        return s;
  return FLB_OK;
}

}  // namespace flambeau::cuda::kernels
