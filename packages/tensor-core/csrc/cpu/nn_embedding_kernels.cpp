// CPU kernels of embedding and embedding_bag (forward and backward). Row
// gathers copy bytes (any dtype); bags and gradients compute in the compute
// type (float for 16-bit floats). Indices arrive as contiguous int64, checked
// to be in range by the frontends.
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_kernels.h"

namespace flambeau {

namespace {

void embedding_kernel(const Tensor& out, const Tensor& weight, const Tensor& indices) {
  const int64_t m = indices->numel(), d = weight->size(1);
  const size_t row = static_cast<size_t>(d) * weight->itemsize();
  const int64_t* idx = indices->data_as<const int64_t>();
  const char* w = weight->data();
  char* o = out->data();
  parallel_for(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t i = lo; i < hi; ++i) std::memcpy(o + i * row, w + idx[i] * row, row);
               });
}
FLB_REGISTER_KERNEL(embedding, kCPU, embedding_kernel);

void embedding_bag_kernel(const Tensor& out, const Tensor& offset2bag, const Tensor& bag_size,
                          const Tensor& max_indices, const Tensor& weight, const Tensor& indices,
                          const Tensor& starts, int64_t mode, const Tensor& psw,
                          int64_t padding_idx) {
  visit_dtype<kFloatTypes>(weight->dtype(), "embedding_bag", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const int64_t bags = bag_size->numel(), d = weight->size(1);
    const int64_t* idx = indices->data_as<const int64_t>();
    const int64_t* st = starts->data_as<const int64_t>();
    const T* w = weight->data_as<const T>();
    const T* ps = psw ? psw->data_as<const T>() : nullptr;
    T* o = out->data_as<T>();
    int64_t* o2b = offset2bag->data_as<int64_t>();
    int64_t* bs = bag_size->data_as<int64_t>();
    int64_t* mi = mode == 2 ? max_indices->data_as<int64_t>() : nullptr;
    parallel_for(0, bags, 1, [&](int64_t lo, int64_t hi) {
      Scratch<A> acc(d);
      for (int64_t b = lo; b < hi; ++b) {
        const bool is_max = mode == 2;
        std::fill(acc.begin(), acc.end(), is_max ? -std::numeric_limits<A>::infinity() : A(0));
        int64_t* best = is_max ? mi + b * d : nullptr;
        if (is_max) std::fill(best, best + d, int64_t(-1));
        int64_t count = 0;
        for (int64_t i = st[b]; i < st[b + 1]; ++i) {
          o2b[i] = b;
          const int64_t r = idx[i];
          if (r == padding_idx) continue;
          ++count;
          const T* row = w + r * d;
          if (is_max) {
            for (int64_t j = 0; j < d; ++j) {
              A v = static_cast<A>(row[j]);
              if (best[j] < 0 || v > acc[j] || v != v) {
                acc[j] = v;
                best[j] = r;
              }
            }
          } else {
            const A s = ps ? static_cast<A>(ps[i]) : A(1);
            for (int64_t j = 0; j < d; ++j) acc[j] += s * static_cast<A>(row[j]);
          }
        }
        bs[b] = count;
        for (int64_t j = 0; j < d; ++j) {
          A v = acc[j];
          if (mode == 1 && count > 0) v /= static_cast<A>(count);
          if (is_max && best[j] < 0) v = A(0);
          o[b * d + j] = static_cast<T>(v);
        }
      }
    });
  });
}
FLB_REGISTER_KERNEL(embedding_bag, kCPU, embedding_bag_kernel);

void embedding_backward_kernel(const Tensor& grad_weight, const Tensor& grad, const Tensor& indices,
                               const Tensor& offset2bag, const Tensor& bag_size,
                               const Tensor& max_indices, const Tensor& psw, int64_t mode,
                               bool scale_grad_by_freq, int64_t padding_idx) {
  visit_dtype<kFloatTypes>(grad->dtype(), "embedding_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const int64_t rows = grad_weight->size(0), d = grad_weight->size(1);
    const T* g = grad->data_as<const T>();
    // Accumulate in A (float for 16-bit floats), then store.
    Scratch<A> acc(static_cast<size_t>(rows * d), A(0));
    if (mode == 2) {
      const int64_t* mi = max_indices->data_as<const int64_t>();
      const int64_t bags = grad->size(0);
      for (int64_t b = 0; b < bags; ++b)
        for (int64_t j = 0; j < d; ++j) {
          const int64_t r = mi[b * d + j];
          if (r >= 0 && r != padding_idx) acc[r * d + j] += static_cast<A>(g[b * d + j]);
        }
    } else {
      const int64_t m = indices->numel();
      const int64_t* idx = indices->data_as<const int64_t>();
      const int64_t* o2b = offset2bag ? offset2bag->data_as<const int64_t>() : nullptr;
      const int64_t* bs = bag_size ? bag_size->data_as<const int64_t>() : nullptr;
      const T* ps = psw ? psw->data_as<const T>() : nullptr;
      std::unordered_map<int64_t, int64_t> freq;
      if (scale_grad_by_freq)
        for (int64_t i = 0; i < m; ++i) ++freq[idx[i]];
      for (int64_t i = 0; i < m; ++i) {
        const int64_t r = idx[i];
        if (r == padding_idx) continue;
        const int64_t bag = o2b ? o2b[i] : i;
        A s = ps ? static_cast<A>(ps[i]) : A(1);
        if (mode == 1) s /= static_cast<A>(bs[bag]);
        if (scale_grad_by_freq) s /= static_cast<A>(freq[r]);
        const T* src = g + bag * d;
        A* dst = acc.data() + r * d;
        for (int64_t j = 0; j < d; ++j) dst[j] += s * static_cast<A>(src[j]);
      }
    }
    T* out = grad_weight->data_as<T>();
    for (int64_t k = 0; k < rows * d; ++k) out[k] = static_cast<T>(acc[k]);
  });
}
FLB_REGISTER_KERNEL(embedding_dense_backward, kCPU, embedding_backward_kernel);

}  // namespace

}  // namespace flambeau
