// Strided indexing shared by every kernel: the byte offsets of element `i`
// (row-major over the shape) in each of N operands, after merging dimensions
// that are contiguous in all of them. Plain C++ with __host__ __device__ marks,
// so the tests compile and check it with g++ (tests/host_kernels/).
#pragma once
#include <flambeau/backend_abi.h>

#include <cstdint>

#if defined(__CUDACC__)
#define FLB_HD __host__ __device__
#else
#define FLB_HD
#endif

namespace flambeau::cuda::kernels {

constexpr int kMaxDims = 16;

// Bytes per element of a flambeau dtype (0 for an unknown one).
inline int64_t itemsize(int32_t dtype) {
  switch (dtype) {
    case FLB_BOOL:
    case FLB_UINT8:
    case FLB_INT8:
      return 1;
    case FLB_INT16:
    case FLB_FLOAT16:
    case FLB_BFLOAT16:
      return 2;
    case FLB_INT32:
    case FLB_FLOAT32:
      return 4;
    case FLB_INT64:
    case FLB_FLOAT64:
    case FLB_COMPLEX64:
      return 8;
    case FLB_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

template <int N>
struct StridedIndex {
  int ndim = 0;                       // after merging; 0 for a single element
  int64_t sizes[kMaxDims] = {};       // innermost last
  int64_t strides[N][kMaxDims] = {};  // in bytes, per operand

  // Offsets in bytes of element `linear` in each operand.
  template <class Index>
  FLB_HD void offsets(Index linear, Index (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      Index size = static_cast<Index>(sizes[d]);
      Index coord = linear % size;
      linear /= size;
      for (int k = 0; k < N; ++k) out[k] += coord * static_cast<Index>(strides[k][d]);
    }
  }

  // Whether every operand is dense in order with the given element sizes.
  bool contiguous(const int64_t (&item)[N]) const {
    if (ndim == 0) return true;
    if (ndim != 1) return false;
    for (int k = 0; k < N; ++k)
      if (strides[k][0] != item[k]) return false;
    return true;
  }
};

// Builds the index over `shape` (ndim dims) for operands whose element strides
// are strides[k] and element sizes item[k]. Size-1 dims are dropped and a dim
// is merged into the next-outer one when every operand allows it. Returns
// false when more than kMaxDims dims remain.
template <int N>
bool make_index(int ndim, const int64_t* shape, const int64_t* const (&strides)[N],
                const int64_t (&item)[N], StridedIndex<N>* out) {
  StridedIndex<N> ix;
  int64_t sizes[64];
  int64_t st[N][64];
  int n = 0;
  if (ndim > 64) return false;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    sizes[n] = shape[d];
    for (int k = 0; k < N; ++k) st[k][n] = strides[k][d] * item[k];
    ++n;
  }
  // Merge from the inside out: dim i-1 into dim i when stride[i-1] == stride[i] * size[i].
  int m = 0;  // dims kept so far, in sizes[0..m)
  for (int d = 0; d < n; ++d) {
    bool merge = m > 0;
    for (int k = 0; merge && k < N; ++k) merge = st[k][m - 1] == st[k][d] * sizes[d];
    if (merge) {
      sizes[m - 1] *= sizes[d];
      for (int k = 0; k < N; ++k) st[k][m - 1] = st[k][d];
    } else {
      sizes[m] = sizes[d];
      for (int k = 0; k < N; ++k) st[k][m] = st[k][d];
      ++m;
    }
  }
  if (m > kMaxDims) return false;
  ix.ndim = m;
  for (int d = 0; d < m; ++d) {
    ix.sizes[d] = sizes[d];
    for (int k = 0; k < N; ++k) ix.strides[k][d] = st[k][d];
  }
  *out = ix;
  return true;
}

inline int64_t numel(const flb_tensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}

}  // namespace flambeau::cuda::kernels
