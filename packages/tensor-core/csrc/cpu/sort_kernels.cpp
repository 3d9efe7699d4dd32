// CPU kernels of ordering operators: sort, topk, kth element / median, mode.
// Each works on contiguous [rows, n] inputs (see ops/sorting_kernels.h): rows
// run in parallel, each copied once into a buffer of (key, index) pairs that
// std::sort / nth_element reorder. Ties break by index, so results are stable.
#include <algorithm>
#include <functional>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "cpu/sort_keys.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/sorting_kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kSortTypes = kRealTypes | kBoolTypes;

// Comparator of Keyed pairs; NaN-free rows skip the NaN checks.
template <class K, bool Desc, bool Nan>
struct Cmp {
  bool operator()(const Keyed<K>& a, const Keyed<K>& b) const {
    const K x = Desc ? b.key : a.key, y = Desc ? a.key : b.key;
    if constexpr (Nan) {
      if (key_less(x, y)) return true;
      if (key_less(y, x)) return false;
    } else {
      if (x < y) return true;
      if (y < x) return false;
    }
    return a.index < b.index;
  }
};

// Calls f(cmp) with the comparator for (descending, has_nan).
template <class K, class F>
void with_cmp(bool descending, bool has_nan, F&& f) {
  if (descending) {
    has_nan ? f(Cmp<K, true, true>{}) : f(Cmp<K, true, false>{});
  } else {
    has_nan ? f(Cmp<K, false, true>{}) : f(Cmp<K, false, false>{});
  }
}

// Fills buf with (key, index) of one row; returns whether it holds a NaN.
template <class T, class K = sort_key_t<T>>
bool load_row(const T* x, int64_t n, Keyed<K>* buf) {
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    K k = static_cast<K>(x[j]);
    nan |= key_isnan(k);
    buf[j] = {k, j};
  }
  return nan;
}

int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)); }

// Sorts a long row by sorting chunks in parallel, then merging them pairwise.
template <class K, class C>
void parallel_sort(Keyed<K>* b, int64_t n, C cmp) {
  const int64_t chunks = std::min<int64_t>(get_num_threads(), n / 8192);
  if (chunks <= 1) {
    std::sort(b, b + n, cmp);
    return;
  }
  std::vector<int64_t> bounds;
  for (int64_t c = 0; c <= chunks; ++c) bounds.push_back(n * c / chunks);
  parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) std::sort(b + bounds[c], b + bounds[c + 1], cmp);
  });
  while (bounds.size() > 2) {  // merge neighbours: [b0,b1) with [b1,b2), ...
    const int64_t pairs = static_cast<int64_t>(bounds.size() - 1) / 2;
    parallel_for(0, pairs, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p)
        std::inplace_merge(b + bounds[2 * p], b + bounds[2 * p + 1], b + bounds[2 * p + 2], cmp);
    });
    std::vector<int64_t> next;
    for (size_t i = 0; i < bounds.size(); i += 2) next.push_back(bounds[i]);
    if (next.back() != bounds.back()) next.push_back(bounds.back());
    bounds.swap(next);
  }
}

void sort_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending) {
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  visit_dtype<kSortTypes>(in->dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* src = in->data_as<T>();
    T* vout = values->data_as<T>();
    int64_t* iout = indices->data_as<int64_t>();
    const bool one_long_row = rows < get_num_threads() && n >= (1 << 16);
    parallel_for(0, rows, one_long_row ? rows : row_grain(n), [&](int64_t r0, int64_t r1) {
      Scratch<Keyed<K>> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = src + r * n;
        const bool nan = load_row(x, n, buf.data());
        with_cmp<K>(descending, nan, [&](auto cmp) {
          if (one_long_row) {
            parallel_sort(buf.data(), n, cmp);
          } else {
            std::sort(buf.begin(), buf.end(), cmp);
          }
        });
        for (int64_t j = 0; j < n; ++j) {
          vout[r * n + j] = x[buf[j].index];
          iout[r * n + j] = buf[j].index;
        }
      }
    });
  });
}

// For a small k: the indices of a row's elements at least as good as a
// threshold picked from a sample, so that about 2k of them pass. Every element
// of the top k passes when at least k do (the k-th best is then no worse than
// the threshold). Returns how many passed, or -1 (NaN in the sample, or too
// few passed: the caller then selects from the whole row).
template <class T, class K = sort_key_t<T>>
int64_t gather_candidates(const T* x, int64_t n, int64_t k, bool largest, std::vector<K>& sample,
                          Scratch<int64_t>& cand) {
  const int64_t s = 256;
  sample.resize(s);
  for (int64_t i = 0; i < s; ++i) {
    sample[i] = static_cast<K>(x[i * n / s]);
    if (key_isnan(sample[i])) return -1;
  }
  const int64_t rank = std::min<int64_t>(s - 1, 2 * k * s / n);
  if (largest) {
    std::nth_element(sample.begin(), sample.begin() + rank, sample.end(), std::greater<K>());
  } else {
    std::nth_element(sample.begin(), sample.begin() + rank, sample.end());
  }
  const K th = sample[rank];
  int64_t m = 0;
  bool nan = false;  // NaN is the best (largest) or worst: leave it to the full path
  if (largest) {
    for (int64_t j = 0; j < n; ++j) {  // branch-free: write always, advance on a pass
      const K v = static_cast<K>(x[j]);
      cand[m] = j;
      m += v >= th;
      nan |= key_isnan(v);
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      const K v = static_cast<K>(x[j]);
      cand[m] = j;
      m += v <= th;
      nan |= key_isnan(v);
    }
  }
  return m >= k && !nan ? m : -1;
}

void topk_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                 bool largest, bool sorted) {
  (void)sorted;  // the k elements always come out sorted (allowed when unsorted)
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  const bool small_k = k * 16 <= n && n >= 512;
  visit_dtype<kRealTypes>(in->dtype(), "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* src = in->data_as<T>();
    T* vout = values->data_as<T>();
    int64_t* iout = indices->data_as<int64_t>();
    parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
      Scratch<Keyed<K>> buf(static_cast<size_t>(n));
      std::vector<K> keys;
      Scratch<int64_t> cand(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = src + r * n;
        const int64_t m = small_k ? gather_candidates(x, n, k, largest, keys, cand) : -1;
        if (m >= 0) {
          for (int64_t j = 0; j < m; ++j) buf[j] = {static_cast<K>(x[cand[j]]), cand[j]};
        } else {
          load_row(x, n, buf.data());
        }
        const int64_t len = m >= 0 ? m : n;
        with_cmp<K>(largest, m < 0, [&](auto cmp) {
          if (k < len) std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.begin() + len, cmp);
          std::sort(buf.begin(), buf.begin() + k, cmp);
        });
        for (int64_t j = 0; j < k; ++j) {
          vout[r * k + j] = x[buf[j].index];
          iout[r * k + j] = buf[j].index;
        }
      }
    });
  });
}

// k-th smallest (0-based) of each row; the median propagates NaN (its first
// NaN), nanmedian takes the lower median of the non-NaN elements.
void select_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                   Select what) {
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  visit_dtype<kRealTypes>(in->dtype(), "kthvalue", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* src = in->data_as<T>();
    T* vout = values->data_as<T>();
    int64_t* iout = indices->data_as<int64_t>();
    parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
      Scratch<Keyed<K>> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = src + r * n;
        int64_t m = 0, first_nan = -1;
        for (int64_t j = 0; j < n; ++j) {
          const K key = static_cast<K>(x[j]);
          if (key_isnan(key)) {
            if (first_nan < 0) first_nan = j;
            if (what == Select::NanMedian) continue;
          }
          buf[m++] = {key, j};
        }
        int64_t pick;
        if (first_nan >= 0 && (what == Select::Median || m == 0)) {
          pick = first_nan;
        } else {
          const int64_t kk = what == Select::NanMedian ? (m - 1) / 2 : k;
          with_cmp<K>(false, first_nan >= 0, [&](auto cmp) {
            std::nth_element(buf.begin(), buf.begin() + kk, buf.begin() + m, cmp);
          });
          pick = buf[kk].index;
        }
        vout[r] = x[pick];
        iout[r] = pick;
      }
    });
  });
}

// Most frequent value (the smallest among equally frequent) and its last index.
void mode_kernel(const Tensor& values, const Tensor& indices, const Tensor& in) {
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  visit_dtype<kSortTypes>(in->dtype(), "mode", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* src = in->data_as<T>();
    T* vout = values->data_as<T>();
    int64_t* iout = indices->data_as<int64_t>();
    parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
      Scratch<Keyed<K>> buf(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = src + r * n;
        const bool nan = load_row(x, n, buf.data());
        with_cmp<K>(false, nan, [&](auto cmp) { std::sort(buf.begin(), buf.end(), cmp); });
        int64_t best = 0, best_count = 0;
        for (int64_t j = 0; j < n;) {
          int64_t e = j + 1;
          while (e < n && !key_less(buf[j].key, buf[e].key)) ++e;
          if (e - j > best_count) best_count = e - j, best = e - 1;
          j = e;
        }
        vout[r] = x[buf[best].index];
        iout[r] = buf[best].index;
      }
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(sort, kCPU, sort_kernel);
FLB_REGISTER_KERNEL(topk, kCPU, topk_kernel);
FLB_REGISTER_KERNEL(kthvalue, kCPU, select_kernel);
FLB_REGISTER_KERNEL(mode, kCPU, mode_kernel);

}  // namespace flambeau
