// CPU kernels of unique, searchsorted/bucketize, bincount and histc.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "cpu/radix_sort.h"
#include "cpu/sort_keys.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/sorting_kernels.h"

namespace flambeau {

namespace {

// Unique elements of in [N, 1], sorted: a radix sort of order-preserving keys
// (stable, so the first of equal elements leads its group), then one pass that
// starts a group wherever a key differs from the one before. Integer keys are
// their values, so without an inverse they sort alone, without indices.
template <class T, class I>
std::tuple<Tensor, Tensor, Tensor> unique_sorted_elements(const Tensor& in, bool want_inverse) {
  using K = sort_key_t<T>;
  using U = radix_key_t<K>;
  const int64_t N = in->sizes()[0];
  const T* x = in->data_as<T>();
  const bool with_index = want_inverse || !std::is_integral_v<K>;
  Scratch<U> keys(static_cast<size_t>(N));
  Scratch<I> index(with_index ? static_cast<size_t>(N) : 0);
  parallel_for(0, N, kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) keys[i] = radix_key(static_cast<K>(x[i]));
    if (with_index)
      for (int64_t i = lo; i < hi; ++i) index[i] = static_cast<I>(i);
  });
  radix_sort(keys.data(), with_index ? index.data() : nullptr, N);
  constexpr U kNan = static_cast<U>(~U(0));  // NaNs share this key, yet are never equal
  std::vector<int64_t> firsts;               // where each group starts in sorted order
  for (int64_t i = 0; i < N; ++i) {
    if (i == 0 || keys[i] != keys[i - 1] || (std::is_floating_point_v<K> && keys[i] == kNan))
      firsts.push_back(i);
  }
  const int64_t u = static_cast<int64_t>(firsts.size());
  Tensor out = empty(DimVector{u, 1}, in->dtype(), in->device());
  Tensor counts = empty(DimVector{u}, ScalarType::Int64, in->device());
  Tensor inverse = empty(DimVector{want_inverse ? N : 0}, ScalarType::Int64, in->device());
  T* o = out->data_as<T>();
  int64_t* c = counts->data_as<int64_t>();
  int64_t* inv = inverse->data_as<int64_t>();
  for (int64_t g = 0; g < u; ++g) {
    const int64_t lo = firsts[g], hi = g + 1 < u ? firsts[g + 1] : N;
    if constexpr (std::is_integral_v<K>) {
      o[g] = static_cast<T>(radix_value<K>(keys[lo]));
    } else {
      o[g] = x[index[lo]];
    }
    c[g] = hi - lo;
    if (want_inverse)
      for (int64_t i = lo; i < hi; ++i) inv[index[i]] = g;
  }
  return {out, inverse, counts};
}

// Unique rows of in [N, m]: an order of the rows (sorted, or as given), then
// one pass that starts a group wherever a row differs from the one before.
// Equal means == elementwise, so NaNs are never equal (as PyTorch).
std::tuple<Tensor, Tensor, Tensor> unique_kernel(const Tensor& in, bool sort, bool want_inverse) {
  const int64_t N = in->sizes()[0], m = in->sizes()[1];
  return visit_dtype<kRealTypes | kBoolTypes>(in->dtype(), "unique", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    if (sort && m == 1) {
      if (N <= std::numeric_limits<uint32_t>::max())
        return unique_sorted_elements<T, uint32_t>(in, want_inverse);
      return unique_sorted_elements<T, int64_t>(in, want_inverse);
    }
    const T* x = in->data_as<T>();
    Scratch<int64_t> order(static_cast<size_t>(N));
    auto row_equal = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j)
        if (!(static_cast<K>(x[a * m + j]) == static_cast<K>(x[b * m + j]))) return false;
      return true;
    };
    for (int64_t i = 0; i < N; ++i) order[i] = i;
    if (sort) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        for (int64_t j = 0; j < m; ++j) {
          const K u = static_cast<K>(x[a * m + j]), v = static_cast<K>(x[b * m + j]);
          if (key_less(u, v)) return true;
          if (key_less(v, u)) return false;
        }
        return false;
      });
    }
    std::vector<int64_t> firsts;  // the first row (in `order`) of each group
    Tensor inverse = empty(DimVector{N}, ScalarType::Int64, in->device());
    int64_t* inv = inverse->data_as<int64_t>();
    for (int64_t i = 0; i < N; ++i) {
      if (i == 0 || !row_equal(order[i], order[i - 1])) firsts.push_back(i);
      inv[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    }
    const int64_t u = static_cast<int64_t>(firsts.size());
    Tensor out = empty(DimVector{u, m}, in->dtype(), in->device());
    Tensor counts = empty(DimVector{u}, ScalarType::Int64, in->device());
    T* o = out->data_as<T>();
    int64_t* c = counts->data_as<int64_t>();
    for (int64_t g = 0; g < u; ++g) {
      std::memcpy(o + g * m, x + order[firsts[g]] * m, static_cast<size_t>(m) * sizeof(T));
      c[g] = (g + 1 < u ? firsts[g + 1] : N) - firsts[g];
    }
    return std::tuple<Tensor, Tensor, Tensor>{out, inverse, counts};
  });
}

void searchsorted_kernel(const Tensor& out, const Tensor& seq, const Tensor& values,
                         const Tensor& sorter, bool right) {
  const int64_t rows = values->sizes()[0], m = values->sizes()[1], s = seq->sizes()[1];
  const bool shared = seq->sizes()[0] == 1;  // one sequence for every row
  const int64_t* srt = sorter ? sorter->data_as<int64_t>() : nullptr;
  if (srt) {
    for (int64_t i = 0; i < sorter->numel(); ++i) {
      FLB_CHECK(srt[i] >= 0 && srt[i] < s, "searchsorted(): sorter index ", srt[i],
                " is out of range for a sequence of length ", s);
    }
  }
  visit_dtype<kRealTypes | kBoolTypes>(values->dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* sq = seq->data_as<T>();
    const T* v = values->data_as<T>();
    auto run = [&](auto* dst) {
      using I = std::remove_pointer_t<decltype(dst)>;
      parallel_for(0, rows * m, kGrainSize / 16, [&](int64_t lo, int64_t hi) {
        for (int64_t e = lo; e < hi; ++e) {
          const int64_t r = shared ? 0 : e / m;
          const T* row = sq + r * s;
          const int64_t* perm = srt ? srt + r * s : nullptr;
          const K key = static_cast<K>(v[e]);
          int64_t a = 0, b = s;  // invariant: answer in [a, b]
          while (a < b) {
            const int64_t mid = a + (b - a) / 2;
            const K at = static_cast<K>(row[perm ? perm[mid] : mid]);
            if (right ? !key_less(key, at) : key_less(at, key)) {
              a = mid + 1;
            } else {
              b = mid;
            }
          }
          dst[e] = static_cast<I>(a);
        }
      });
    };
    if (out->dtype() == ScalarType::Int32) {
      run(out->data_as<int32_t>());
    } else {
      run(out->data_as<int64_t>());
    }
  });
}

void bincount_kernel(const Tensor& out, const Tensor& in, const Tensor& weights) {
  const int64_t n = in->numel(), len = out->numel();
  const int64_t* idx = in->data_as<int64_t>();
  visit_dtype<dtype_bit(ScalarType::Int64) | dtype_bit(ScalarType::Float32) |
              dtype_bit(ScalarType::Float64)>(out->dtype(), "bincount", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    std::fill(o, o + len, T(0));
    const T* w = weights ? weights->data_as<T>() : nullptr;
    for (int64_t i = 0; i < n; ++i) o[idx[i]] += w ? w[i] : T(1);
  });
}

void histc_kernel(const Tensor& out, const Tensor& in, double lo, double hi) {
  const int64_t bins = out->numel(), n = in->numel();
  const double* x = in->data_as<double>();
  Scratch<double> counts(static_cast<size_t>(bins), 0.0);
  const double scale = static_cast<double>(bins) / (hi - lo);
  for (int64_t i = 0; i < n; ++i) {
    if (!(x[i] >= lo && x[i] <= hi)) continue;  // outside, or NaN
    const int64_t b = std::min(static_cast<int64_t>((x[i] - lo) * scale), bins - 1);
    counts[b] += 1;
  }
  visit_dtype<kFloatTypes>(out->dtype(), "histc", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    for (int64_t b = 0; b < bins; ++b) o[b] = static_cast<T>(static_cast<compute_t<T>>(counts[b]));
  });
}

}  // namespace

FLB_REGISTER_KERNEL(_unique2, kCPU, unique_kernel);
FLB_REGISTER_KERNEL(searchsorted, kCPU, searchsorted_kernel);
FLB_REGISTER_KERNEL(bincount, kCPU, bincount_kernel);
FLB_REGISTER_KERNEL(histc, kCPU, histc_kernel);

}  // namespace flambeau
