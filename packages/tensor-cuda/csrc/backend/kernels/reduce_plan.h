// How a reduction walks its operands: `in` split into kept dims (the outer index,
// shared with the outputs, which have in's rank with the reduced dims of size 1)
// and reduced dims (the inner index, over `in` alone). Output o's slice is the
// inner walk from in + outer.offsets(o)[NOUT]; its r-th element (row-major over
// the reduced dims) is at inner.offsets(r). Plain C++ with __host__ __device__
// marks, so the tests check it with g++ (tests/host_kernels/).
#pragma once
#include <cstdint>

#include "backend/kernels/strided_index.h"

namespace flambeau::cuda::kernels {

template <int NOUT>
struct ReducePlan {
  StridedIndex<NOUT + 1> outer;  // operands: the NOUT outputs, then in
  StridedIndex<1> inner;         // in's reduced dims
  int64_t n_out = 1;             // outputs (product of the kept dims)
  int64_t n_inner = 1;           // elements reduced into each output
};

// The plan for `in` (ndim dims of in_sizes, element strides in_strides, in_item
// bytes each) reduced over the dims with reduced[d] set, into NOUT outputs of
// element strides out_strides[k] and out_item[k] bytes. False when ndim > 64 or
// more than kMaxDims dims remain after merging.
template <int NOUT>
bool make_reduce_plan(int ndim, const int64_t* in_sizes, const int64_t* in_strides, int64_t in_item,
                      const int64_t* const (&out_strides)[NOUT], const int64_t (&out_item)[NOUT],
                      const bool* reduced, ReducePlan<NOUT>* plan) {
  if (ndim > 64) return false;
  int64_t kept_shape[64], inner_shape[64];
  ReducePlan<NOUT> p;
  for (int d = 0; d < ndim; ++d) {
    kept_shape[d] = reduced[d] ? 1 : in_sizes[d];
    inner_shape[d] = reduced[d] ? in_sizes[d] : 1;
    p.n_out *= kept_shape[d];
    p.n_inner *= inner_shape[d];
  }
  const int64_t* outer_strides[NOUT + 1];
  int64_t outer_item[NOUT + 1];
  for (int k = 0; k < NOUT; ++k) {
    outer_strides[k] = out_strides[k];
    outer_item[k] = out_item[k];
  }
  outer_strides[NOUT] = in_strides;
  outer_item[NOUT] = in_item;
  const int64_t* inner_strides[1] = {in_strides};
  const int64_t inner_item[1] = {in_item};
  if (!make_index<NOUT + 1>(ndim, kept_shape, outer_strides, outer_item, &p.outer)) return false;
  if (!make_index<1>(ndim, inner_shape, inner_strides, inner_item, &p.inner)) return false;
  *plan = p;
  return true;
}

// Reductions whose slices are short run one thread per output (a serial loop);
// longer ones one block per output (or per chunk, below) with a fixed tree. Every
// order depends on the shapes alone, so results are deterministic.
constexpr int64_t kSerialReduceMax = 32;

// A few outputs over long slices would leave most of the GPU idle with one block
// each: their slices are then cut into chunks of a fixed length (a function of the
// shape alone), one block per chunk, and a second pass combines each output's
// chunks in order. The number of chunks per slice; 1: no split.
constexpr int64_t kReduceChunk = 16384;
constexpr int64_t kMaxSplitOutputs = 256;
constexpr int64_t kMaxChunks = 1024;
inline int64_t reduce_chunks(int64_t n_out, int64_t n_inner) {
  if (n_out > kMaxSplitOutputs || n_inner < 2 * kReduceChunk) return 1;
  const int64_t chunks = (n_inner + kReduceChunk - 1) / kReduceChunk;
  return chunks < kMaxChunks ? chunks : kMaxChunks;
}

// Threads per block of the tree path: a power of two covering n_inner, 32..256.
inline unsigned reduce_threads_for(int64_t n_inner) {
  unsigned t = 32;
  while (t < 256 && t < n_inner) t *= 2;
  return t;
}

}  // namespace flambeau::cuda::kernels
