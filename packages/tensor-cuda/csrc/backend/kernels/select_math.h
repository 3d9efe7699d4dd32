// What kthvalue (and median, nanmedian) and mode pick from a row sorted as the
// sort kernel sorts it (stable radix keys: ascending, NaN last, equal keys in
// index order), and searchsorted's binary search; plain C++ marked __host__
// __device__ so the tests check it with g++ against the CPU's rules
// (tests/host_kernels/check_select_math.cpp).
#pragma once
#include <flambeau/backend_kernels.h>

#include <cstdint>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

// The core's Select: what kthvalue's kernel picks (numbered by the plugin ABI).
enum class SelectWhat : int64_t {
  kKth = FLB_SELECT_KTH,
  kMedian = FLB_SELECT_MEDIAN,
  kNanMedian = FLB_SELECT_NAN_MEDIAN,
};

// The sorted position of the element picked from a row of n elements whose first
// `finite` sorted positions are not NaN (NaNs sort last, in index order):
// kKth the k-th; kMedian the first NaN if any (NaN propagates), else the k-th;
// kNanMedian the lower median of the non-NaN elements, or the first NaN when all
// are NaN.
FLB_HD inline int64_t select_sorted_position(int64_t n, int64_t finite, int64_t k,
                                             SelectWhat what) {
  if (what == SelectWhat::kMedian && finite < n) return finite;
  if (what == SelectWhat::kNanMedian) return finite == 0 ? 0 : (finite - 1) / 2;
  return k;
}

// How many sorted keys come before the first `nan_key` (sorted last): a binary
// search over keys[0, n).
template <class U>
FLB_HD inline int64_t count_before_key(const U* keys, int64_t n, U nan_key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] == nan_key)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// mode: the sorted position of the last element of the longest run of equal keys
// (the first such run, so the smallest value wins ties between runs); with stable
// keys that element has the largest index of its value, as the CPU's mode.
template <class U>
FLB_HD inline int64_t mode_sorted_position(const U* keys, int64_t n) {
  int64_t best = 0, best_count = 0;
  for (int64_t j = 0; j < n;) {
    int64_t e = j + 1;
    while (e < n && keys[e] == keys[j]) ++e;
    if (e - j > best_count) {
      best_count = e - j;
      best = e - 1;
    }
    j = e;
  }
  return best;
}

// a < b in the sorting order: numbers ascending, NaN above all (NaNs equal).
template <class K>
FLB_HD inline bool nan_last_less(K a, K b) {
  return a < b || (b != b && a == a);
}

// searchsorted: the first position in a sorted sequence of s elements (element
// q read as at(q)) where key could be inserted keeping the order: before equal
// elements, or after them when `right`.
template <class K, class At>
FLB_HD inline int64_t search_position(K key, int64_t s, bool right, const At& at) {
  int64_t a = 0, b = s;
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    const K v = at(mid);
    if (right ? !nan_last_less(key, v) : nan_last_less(v, key))
      a = mid + 1;
    else
      b = mid;
  }
  return a;
}

}  // namespace flambeau::cuda::kernels
