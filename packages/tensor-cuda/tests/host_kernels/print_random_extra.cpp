// Prints what the CUDA samplers of random_extra_ops.cu would write (their per-element
// arithmetic, csrc/backend/kernels/random_extra_sampling.h, run here on the host
// with the kernels' element-to-lane mapping) so the test can compare them with
// the CPU's samplers:
//
//   print_random_extra KIND UNIT SEED BASE N A B
//
// KIND: exponential (A = lambda), geometric (A = p), cauchy (A = median, B = sigma):
//   N elements of UNIT (float64 reads two lanes per element), %.17g in double,
//   rounded to float for the other units;
// poisson: N elements with rates A + B * i;
// multinomial_with / multinomial_without: N samples per row of B rows of A
//   categories, row r's weight of category c being (3 * r + 2 * c) % 5 (zeros
//   included), one row per line;
// randperm: the permutation of N by the kernel's rounds of reservations (the
//   Fisher-Yates steps run in parallel), then "rounds R" on stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/kernels/random_extra_sampling.h"

using namespace flambeau::cuda::kernels;

namespace {

double weight(int64_t r, int64_t c) { return static_cast<double>((3 * r + 2 * c) % 5); }

void multinomial(uint64_t seed, uint64_t base, int64_t n, int64_t cats, int64_t rows,
                 bool replacement) {
  std::vector<double> p(rows * cats), cdf(rows * cats);
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t c = 0; c < cats; ++c) {
      p[r * cats + c] = weight(r, c);
      total += p[r * cats + c];
      cdf[r * cats + c] = total;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (replacement) {
      for (int64_t s = 0; s < n; ++s)
        std::printf("%lld ",
                    static_cast<long long>(multinomial_pick(
                        &p[r * cats], &cdf[r * cats], cats,
                        lane_at(seed, base, static_cast<uint64_t>(r * n + s)))));  // NOLINT
    } else {
      // The kernel's stable sort of (key, category) pairs, here a stable sort by key.
      std::vector<std::pair<double, int64_t>> keys;
      for (int64_t c = 0; c < cats; ++c)
        keys.push_back({multinomial_key(lane_at(seed, base, static_cast<uint64_t>(r * cats + c)),
                                        p[r * cats + c]),
                        c});
      std::stable_sort(keys.begin(), keys.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (int64_t s = 0; s < n; ++s) std::printf("%lld ", static_cast<long long>(keys[s].second));
    }
    std::printf("\n");
  }
}

// randperm_commit_kernel's rounds, one thread's work after another: a step holding
// both of its reservations swaps, the others wait for the next round.
void randperm(uint64_t seed, uint64_t base, int64_t n) {
  std::vector<int64_t> perm(n), target(n, 0), pending;
  for (int64_t i = 0; i < n; ++i) {
    perm[i] = i;
    if (i > 0) {
      target[i] = randperm_target(philox4x32(seed, base + static_cast<uint64_t>(i / 2)), i);
      pending.push_back(i);
    }
  }
  std::vector<int64_t> res(n, 0);
  int rounds = 0;
  while (!pending.empty()) {
    ++rounds;
    for (int64_t i : pending) {
      res[i] = std::max(res[i], i);
      res[target[i]] = std::max(res[target[i]], i);
    }
    std::vector<int64_t> next;
    for (int64_t i : pending) {
      if (res[i] == i && res[target[i]] == i)
        std::swap(perm[i], perm[target[i]]);
      else
        next.push_back(i);
    }
    for (int64_t i : pending) res[i] = res[target[i]] = 0;
    pending.swap(next);
  }
  for (int64_t v : perm) std::printf("%lld\n", static_cast<long long>(v));  // NOLINT
  std::fprintf(stderr, "rounds %d\n", rounds);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) return 2;
  const char* kind = argv[1];
  const bool wide = !std::strcmp(argv[2], "float64");
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const uint64_t base = std::strtoull(argv[4], nullptr, 10);
  const int64_t n = std::strtoll(argv[5], nullptr, 10);
  const double a = std::strtod(argv[6], nullptr), b = std::strtod(argv[7], nullptr);
  if (!std::strcmp(kind, "randperm")) {
    randperm(seed, base, n);
    return 0;
  }
  if (!std::strncmp(kind, "multinomial", 11)) {
    multinomial(seed, base, n, static_cast<int64_t>(a), static_cast<int64_t>(b),
                !std::strcmp(kind, "multinomial_with"));
    return 0;
  }
  const bool is_poisson = !std::strcmp(kind, "poisson");
  const DistributionOp d = !std::strcmp(kind, "exponential") ? DistributionOp::kExponential
                           : !std::strcmp(kind, "geometric") ? DistributionOp::kGeometric
                                                             : DistributionOp::kCauchy;
  const int k = wide ? 2 : 1, per = 4 / k;
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (is_poisson) {
      v = poisson_sample(seed, base, i, a + b * static_cast<double>(i));
    } else {
      const PhiloxBlock blk = philox4x32(seed, base + static_cast<uint64_t>(i / per));
      v = distribution_transform(d, open_unit_from(blk, static_cast<int>(i % per) * k, wide), a, b);
    }
    if (!wide) v = static_cast<float>(v);
    std::printf("%.17g\n", v);
  }
  return 0;
}
