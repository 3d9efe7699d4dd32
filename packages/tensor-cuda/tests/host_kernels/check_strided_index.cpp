// Checks the kernels' strided indexing (csrc/backend/kernels/strided_index.h, the
// __host__ __device__ code every CUDA kernel uses) on the host: for random shapes,
// permuted, sliced and broadcast strides, the merged index gives every operand the
// byte offset of the naive row-major walk. Prints "ok <cases>" or the first failure.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "backend/kernels/strided_index.h"

using flambeau::cuda::kernels::make_index;
using flambeau::cuda::kernels::StridedIndex;

namespace {

int64_t naive_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                     int64_t linear, int64_t item) {
  int64_t off = 0;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    off += (linear % shape[d]) * strides[d];
    linear /= shape[d];
  }
  return off * item;
}

}  // namespace

int main() {
  std::mt19937 rng(1234);
  int cases = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int ndim = static_cast<int>(rng() % 6);
    std::vector<int64_t> shape(ndim);
    int64_t n = 1;
    for (auto& s : shape) n *= (s = 1 + static_cast<int64_t>(rng() % 4));
    // Operand 0 dense row-major; operand 1 a permuted, stepped or broadcast view.
    std::vector<int64_t> dense(ndim), view(ndim);
    int64_t step = 1;
    for (int d = ndim - 1; d >= 0; --d) dense[d] = step, step *= shape[d];
    std::vector<int> order(ndim);
    for (int d = 0; d < ndim; ++d) order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    int64_t vstep = 1 + static_cast<int64_t>(rng() % 2);
    for (int d : order) {
      view[d] = rng() % 5 == 0 ? 0 : vstep;  // stride 0: broadcast
      vstep *= shape[d] + static_cast<int64_t>(rng() % 2);
    }
    const int64_t* strides[2] = {dense.data(), view.data()};
    const int64_t item[2] = {4, 2};
    StridedIndex<2> ix;
    if (!make_index<2>(ndim, shape.data(), strides, item, &ix)) {
      std::printf("make_index refused %d dims\n", ndim);
      return 1;
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t off64[2];
      ix.offsets(i, off64);
      int32_t off32[2];
      ix.offsets(static_cast<int32_t>(i), off32);
      for (int k = 0; k < 2; ++k) {
        const auto& st = k == 0 ? dense : view;
        int64_t want = naive_offset(shape, st, i, item[k]);
        if (off64[k] != want || off32[k] != want) {
          std::printf("trial %d element %lld operand %d: %lld, want %lld\n", trial,
                      static_cast<long long>(i), k, static_cast<long long>(off64[k]),
                      static_cast<long long>(want));
          return 1;
        }
      }
      ++cases;
    }
    bool dense_pair = ndim > 0 && view == dense;
    if (dense_pair && !ix.contiguous(item)) {
      std::printf("trial %d: dense operands not merged into one dim\n", trial);
      return 1;
    }
  }
  std::printf("ok %d\n", cases);
  return 0;
}
