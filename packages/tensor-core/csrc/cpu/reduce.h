// The reduction engine for CPU kernels.
//
// reduce_into<In, Acc>(acc, in, init, combine, merge) folds `in` into `acc`, a
// contiguous tensor of `in`'s shape with the reduced dims kept as size 1 and
// already filled with `init`. The walk follows `in`'s memory order: when the
// innermost dim is reduced, runs fold into one accumulator with 8 independent
// chains (so the loop pipelines/vectorizes); when it is kept, each input row
// folds elementwise into the accumulator row. Threads split the outermost dim:
// disjoint outputs when it is kept, private accumulators merged at the end when
// it is reduced.
#pragma once
#include <vector>

#include "cpu/tensor_iterator.h"
#include "ops/common.h"

namespace flambeau {

template <class In, class Acc, class Combine, class Merge>
void reduce_run(char** data, const int64_t* s, int64_t n, Acc init, const Combine& combine,
                const Merge& merge) {
  const char* x = data[0];
  char* a = data[1];
  if (s[1] == 0) {
    Acc r[8] = {init, init, init, init, init, init, init, init};
    int64_t i = 0;
    if (s[0] == sizeof(In)) {
      const In* p = reinterpret_cast<const In*>(x);
      for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) r[k] = combine(r[k], p[i + k]);
      for (; i < n; ++i) r[0] = combine(r[0], p[i]);
    } else {
      for (; i < n; ++i) r[0] = combine(r[0], *reinterpret_cast<const In*>(x + i * s[0]));
    }
    Acc total = *reinterpret_cast<Acc*>(a);
    for (int k = 0; k < 8; ++k) total = merge(total, r[k]);
    *reinterpret_cast<Acc*>(a) = total;
    return;
  }
  if (s[0] == sizeof(In) && s[1] == sizeof(Acc)) {
    const In* __restrict__ p = reinterpret_cast<const In*>(x);
    Acc* __restrict__ q = reinterpret_cast<Acc*>(a);
    for (int64_t i = 0; i < n; ++i) q[i] = combine(q[i], p[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    Acc& q = *reinterpret_cast<Acc*>(a + i * s[1]);
    q = combine(q, *reinterpret_cast<const In*>(x + i * s[0]));
  }
}

template <class In, class Acc, class Combine, class Merge>
void reduce_into(const Tensor& acc, const Tensor& in, Acc init, const Combine& combine,
                 const Merge& merge) {
  if (in->numel() == 0) return;
  Tensor acc_view = expand_to(acc, in->sizes(), "reduce");
  Tensor ops[] = {in, acc_view};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  auto run = [&](char** d, const int64_t* s, int64_t n) {
    reduce_run<In, Acc>(d, s, n, init, combine, merge);
  };
  const int64_t numel = it.numel();
  const int threads = get_num_threads();
  if (threads <= 1 || numel <= kGrainSize || it.ndim() == 0) {
    it.serial_for_each(run, 0, numel);
    return;
  }
  const int64_t outer = it.shape()[0];
  const int64_t row = numel / outer;
  if (it.stride(1, 0) != 0) {
    // Outermost dim is kept: each thread owns a slice of the outputs.
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / row),
                 [&](int64_t lo, int64_t hi) { it.serial_for_each(run, lo * row, hi * row); });
    return;
  }
  // Outermost dim is reduced: private accumulators, merged in order.
  const int64_t chunks = std::min<int64_t>(threads, outer);
  const int64_t acc_n = acc->numel();
  std::vector<std::vector<Acc>> partial(static_cast<size_t>(chunks),
                                        std::vector<Acc>(static_cast<size_t>(acc_n), init));
  const char* acc_base = acc->data();
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    char* mine = reinterpret_cast<char*>(partial[c].data());
    auto run_private = [&](char** d, const int64_t* s, int64_t n) {
      char* local[2] = {d[0], mine + (d[1] - acc_base)};
      reduce_run<In, Acc>(local, s, n, init, combine, merge);
    };
    int64_t lo = outer * c / chunks, hi = outer * (c + 1) / chunks;
    it.serial_for_each(run_private, lo * row, hi * row);
  }
  Acc* a = acc->data_as<Acc>();
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < acc_n; ++j) a[j] = merge(a[j], partial[c][j]);
}

}  // namespace flambeau
