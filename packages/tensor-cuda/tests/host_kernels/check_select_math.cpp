// Checks what the kthvalue, mode and searchsorted kernels pick
// (csrc/backend/kernels/select_math.h, __host__ __device__ code) on the host
// against the CPU kernels' rules, over random rows with ties and NaN:
// - kthvalue (kth, median, nanmedian) from the stably sorted row equals the CPU's
//   nth_element with ties by index (median propagates its first NaN, nanmedian
//   takes the lower median of the non-NaN elements, or the first NaN);
// - mode is the smallest most frequent value at its largest index;
// - search_position is the CPU's lower/upper bound with NaN above every number.
// Prints "ok <cases>" or the first failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backend/kernels/select_math.h"

using namespace flambeau::cuda::kernels;

namespace {

int cases = 0;
const double kNan = std::numeric_limits<double>::quiet_NaN();

bool fail(const char* what, long long a, long long b) {
  std::printf("FAIL %s: %lld vs %lld\n", what, a, b);
  return false;
}

bool cpu_less(double a, double b) { return a < b || (std::isnan(b) && !std::isnan(a)); }

// The stable sort of the row's indices (as the radix sort orders them) and keys
// standing in for the radix keys: equal values share a key, every NaN one top key.
void sort_row(const std::vector<double>& x, std::vector<int64_t>* order,
              std::vector<uint32_t>* keys) {
  order->resize(x.size());
  std::iota(order->begin(), order->end(), 0);
  std::stable_sort(order->begin(), order->end(),
                   [&](int64_t a, int64_t b) { return cpu_less(x[a], x[b]); });
  keys->clear();
  uint32_t key = 0;
  for (size_t q = 0; q < order->size(); ++q) {
    const double v = x[(*order)[q]];
    if (std::isnan(v))
      key = ~0u;
    else if (q > 0 && cpu_less(x[(*order)[q - 1]], v))
      ++key;
    keys->push_back(key);
  }
}

// The CPU's select_kernel for one row.
int64_t cpu_select(const std::vector<double>& x, int64_t k, SelectWhat what) {
  std::vector<std::pair<double, int64_t>> buf;
  int64_t first_nan = -1;
  for (int64_t j = 0; j < static_cast<int64_t>(x.size()); ++j) {
    if (std::isnan(x[j])) {
      if (first_nan < 0) first_nan = j;
      if (what == SelectWhat::kNanMedian) continue;
    }
    buf.push_back({x[j], j});
  }
  const int64_t m = static_cast<int64_t>(buf.size());
  if (first_nan >= 0 && (what == SelectWhat::kMedian || m == 0)) return first_nan;
  const int64_t kk = what == SelectWhat::kNanMedian ? (m - 1) / 2 : k;
  std::nth_element(buf.begin(), buf.begin() + kk, buf.end(), [](const auto& a, const auto& b) {
    if (cpu_less(a.first, b.first)) return true;
    if (cpu_less(b.first, a.first)) return false;
    return a.second < b.second;
  });
  return buf[kk].second;
}

// The CPU's mode_kernel for one row: the index it reports.
int64_t cpu_mode(const std::vector<double>& x) {
  std::vector<int64_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return cpu_less(x[a], x[b]); });
  const int64_t n = static_cast<int64_t>(x.size());
  int64_t best = 0, best_count = 0;
  for (int64_t j = 0; j < n;) {
    int64_t e = j + 1;
    while (e < n && !cpu_less(x[order[j]], x[order[e]])) ++e;
    if (e - j > best_count) best_count = e - j, best = e - 1;
    j = e;
  }
  return order[best];
}

bool check_rows() {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 12);
    std::vector<double> x(n);
    for (auto& v : x) {
      const unsigned r = rng() % 10;
      v = r == 0 ? kNan : (r == 1 ? -0.0 : static_cast<double>(static_cast<int>(rng() % 5) - 2));
    }
    if (trial % 17 == 0) std::fill(x.begin(), x.end(), kNan);
    std::vector<int64_t> order;
    std::vector<uint32_t> keys;
    sort_row(x, &order, &keys);
    const int64_t finite = count_before_key<uint32_t>(keys.data(), n, ~0u);
    for (int w = 0; w < 3; ++w) {
      const auto what = static_cast<SelectWhat>(w);
      for (int64_t k = 0; k < (what == SelectWhat::kKth ? n : 1); ++k) {
        const int64_t kk = what == SelectWhat::kMedian ? (n - 1) / 2 : k;
        const int64_t got = order[select_sorted_position(n, finite, kk, what)];
        const int64_t want = cpu_select(x, kk, what);
        if (got != want) return fail("kthvalue", got, want);
        ++cases;
      }
    }
    const int64_t got = order[mode_sorted_position<uint32_t>(keys.data(), n)];
    if (got != cpu_mode(x)) return fail("mode", got, cpu_mode(x));
    ++cases;
  }
  return true;
}

bool check_search() {
  const std::vector<double> seq = {-2, -1, -1, 0, 3, 3, 3, 7, kNan, kNan};
  const int64_t s = static_cast<int64_t>(seq.size());
  for (double key : {-5.0, -2.0, -1.0, -0.5, 0.0, 3.0, 5.0, 7.0, 9.0, kNan}) {
    for (int right = 0; right < 2; ++right) {
      int64_t want = 0;
      while (want < s && (right ? !cpu_less(key, seq[want]) : cpu_less(seq[want], key))) ++want;
      const int64_t got =
          search_position<double>(key, s, right != 0, [&](int64_t q) { return seq[q]; });
      if (got != want) return fail("search_position", got, want);
      ++cases;
    }
  }
  return true;
}

}  // namespace

int main() {
  if (!check_rows() || !check_search()) return 1;
  std::printf("ok %d\n", cases);
  return 0;
}
