// Helpers of the LAPACK-backed frontends (ops/linalg_lapack.cpp, ops/linalg_ldl.cpp):
// argument checks with PyTorch's messages, column-major work copies for the
// kernels of cpu/lapack_kernels.h, and LAPACK's info turned into errors.
#pragma once
#include <string>

#include "core/error.h"
#include "cpu/lapack_kernels.h"
#include "ops/common.h"
#include "plugin/foreign_call.h"  // on_host, copy_to

namespace flambeau::ops::lapack_frontend {

// float32/64 or complex, else PyTorch's "Expected a floating point or complex tensor".
void check_dtype(const char* op, const Tensor& a);
// At least 2 dims, a LAPACK dtype, and square matrices when `square`.
void check_matrix(const char* op, const Tensor& a, bool square);
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);

// batch followed by tail.
DimVector with(IntList batch, std::initializer_list<int64_t> tail);

// A fresh (B, cols, rows) column-major copy of a (batch..., rows, cols).
Tensor colmajor(const Tensor& a);
// The column-major batch w (B, cols, rows) seen as (batch..., rows, cols).
Tensor as_matrices(const Tensor& w, IntList batch, int64_t rows, int64_t cols);

// Zeros of int32 (LAPACK's pivots and info) on the device whose kernel writes them.
Tensor int32_zeros(IntList shape, Device device);

// Broadcasts the batch dims of a (.., r, c) and b (.., r2, c2).
DimVector broadcast_batch(const Tensor& a, const Tensor& b, const char* op);
// t (.., r, c) expanded to (batch..., r, c).
Tensor expand_batch(const Tensor& t, IntList batch, const char* op);

// Raises E (LinAlgError unless told) for the first non-zero info, with PyTorch's
// "(Batch element i): " prefix for batches; msg(info) words the failure.
template <class E = LinAlgError, class Msg>
void check_info(const char* op, const Tensor& info_any, bool batched, Msg&& msg) {
  const Tensor info = on_host(info_any);  // a device kernel's info is read here
  const int32_t* p = info->data_as<int32_t>();
  for (int64_t b = 0; b < info->numel(); ++b) {
    if (p[b] == 0) continue;
    std::string where = batched ? str_cat("(Batch element ", b, "): ") : std::string();
    fail<E>(op, ": ", where, msg(p[b]));
  }
}

}  // namespace flambeau::ops::lapack_frontend
