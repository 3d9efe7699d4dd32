// Checks the reductions' plan (csrc/backend/kernels/reduce_plan.h) on the host:
// for random shapes, strided and permuted inputs, outputs with their own strides
// and random sets of reduced dims, summing each output's slice through the plan
// (outer offsets, then the inner walk) equals the naive sum over every element
// of the input into its output position; and the chunks long slices are cut into
// (reduce_chunks) cover each slice exactly once, in order. Prints "ok <cases>" or
// the first failure.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "backend/kernels/reduce_plan.h"

using flambeau::cuda::kernels::kMaxChunks;
using flambeau::cuda::kernels::kMaxSplitOutputs;
using flambeau::cuda::kernels::kReduceChunk;
using flambeau::cuda::kernels::make_reduce_plan;
using flambeau::cuda::kernels::reduce_chunks;
using flambeau::cuda::kernels::ReducePlan;

namespace {

// The chunks of a slice of n_inner elements partition [0, n_inner) in order, as
// reduce_block_kernel walks them: false and a message otherwise.
bool chunks_cover(int64_t n_out, int64_t n_inner) {
  const int64_t chunks = reduce_chunks(n_out, n_inner);
  const int64_t len = (n_inner + chunks - 1) / chunks;
  if (chunks < 1 || chunks > kMaxChunks || (chunks > 1 && n_out > kMaxSplitOutputs)) {
    std::printf("%lld outputs of %lld: %lld chunks\n", (long long)n_out, (long long)n_inner,
                (long long)chunks);
    return false;
  }
  int64_t next = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * len, end = (c + 1) * len < n_inner ? (c + 1) * len : n_inner;
    if (begin != next || end <= begin) {
      std::printf("%lld elements: chunk %lld is [%lld, %lld)\n", (long long)n_inner, (long long)c,
                  (long long)begin, (long long)end);
      return false;
    }
    next = end;
  }
  return next == n_inner;
}

}  // namespace

int main() {
  std::mt19937 rng(4321);
  int cases = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int ndim = static_cast<int>(rng() % 6);
    std::vector<int64_t> shape(ndim), in_strides(ndim), out_strides(ndim);
    std::vector<char> reduced(ndim);
    for (int d = 0; d < ndim; ++d) {
      shape[d] = static_cast<int64_t>(rng() % 4);  // 0 too: empty slices and outputs
      if (trial % 7 != 0 && shape[d] == 0) shape[d] = 1 + static_cast<int64_t>(rng() % 3);
      reduced[d] = rng() % 2;
    }
    // in: a permuted, possibly stepped layout; out: dense over the kept shape.
    std::vector<int> order(ndim);
    for (int d = 0; d < ndim; ++d) order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    int64_t step = 1 + static_cast<int64_t>(rng() % 2), in_extent = 1;
    for (int d : order) {
      in_strides[d] = step;
      step *= std::max<int64_t>(shape[d], 1) + static_cast<int64_t>(rng() % 2);
    }
    in_extent = step * 2;
    int64_t ostep = 1, n_out = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t size = reduced[d] ? 1 : shape[d];
      out_strides[d] = ostep;
      ostep *= std::max<int64_t>(size, 1);
      n_out *= size;
    }
    std::vector<int64_t> in(static_cast<size_t>(in_extent));
    for (auto& v : in) v = static_cast<int64_t>(rng() % 1000);
    // Naive: every element of in into its output.
    std::vector<int64_t> want(static_cast<size_t>(std::max<int64_t>(ostep, 1)), 0);
    int64_t total = 1;
    for (int64_t s : shape) total *= s;
    for (int64_t linear = 0; linear < total; ++linear) {
      int64_t rest = linear, in_off = 0, out_off = 0;
      for (int d = ndim - 1; d >= 0; --d) {
        const int64_t coord = rest % shape[d];
        rest /= shape[d];
        in_off += coord * in_strides[d];
        if (!reduced[d]) out_off += coord * out_strides[d];
      }
      want[out_off] += in[in_off];
    }
    // Through the plan (byte offsets: in int64 items, out int32 items).
    const int64_t* outs[1] = {out_strides.data()};
    const int64_t out_item[1] = {4};
    bool reduced_flags[64] = {};
    for (int d = 0; d < ndim; ++d) reduced_flags[d] = reduced[d];
    ReducePlan<1> plan;
    if (!make_reduce_plan<1>(ndim, shape.data(), in_strides.data(), 8, outs, out_item,
                             reduced_flags, &plan)) {
      std::printf("plan refused at trial %d\n", trial);
      return 1;
    }
    if (plan.n_out != n_out) {
      std::printf("trial %d: n_out %lld, want %lld\n", trial, (long long)plan.n_out,
                  (long long)n_out);
      return 1;
    }
    for (int64_t o = 0; o < plan.n_out; ++o) {
      int64_t base[2];
      plan.outer.offsets(o, base);
      int64_t got = 0;
      for (int64_t r = 0; r < plan.n_inner; ++r) {
        int64_t off[1];
        plan.inner.offsets(r, off);
        got += in[(base[1] + off[0]) / 8];
      }
      if (base[0] % 4 != 0 || got != want[base[0] / 4]) {
        std::printf("trial %d output %lld: got %lld, want %lld\n", trial, (long long)o,
                    (long long)got, (long long)want[base[0] / 4]);
        return 1;
      }
      ++cases;
    }
  }
  for (int64_t n_out : {int64_t(1), int64_t(7), kMaxSplitOutputs, kMaxSplitOutputs + 1})
    for (int64_t n_inner :
         {int64_t(33), 2 * kReduceChunk - 1, 2 * kReduceChunk, 5 * kReduceChunk + 3,
          kMaxChunks * kReduceChunk + 1, int64_t(1) << 40}) {
      if (!chunks_cover(n_out, n_inner)) return 1;
      ++cases;
    }
  if (reduce_chunks(1, int64_t(1) << 30) <= 1) {
    std::printf("one output of 2**30 elements is not split\n");
    return 1;
  }
  std::printf("ok %d\n", cases);
  return 0;
}
