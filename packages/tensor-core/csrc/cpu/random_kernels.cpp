// CPU random samplers on the Philox stream. Lane j of a call is lane j % 4 of
// counter (base + j / 4), base being the first counter the call reserved.
// Element i reads lanes at positions that depend on i alone, so any split of
// the work across threads gives the same numbers.
#include "ops/random_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/parallel.h"
#include "cpu/philox_lanes.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

template <class F>
void for_range(int64_t n, const F& f) {
  parallel_for(0, n, kGrainSize / 4, f);
}

void uniform_kernel(const Tensor& out, Generator& gen, double from, double to) {
  visit_dtype<kFloatTypes>(out->dtype(), "uniform_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int k = lanes_per_uniform<T>();
    const int64_t n = out->numel();
    const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(n) * k));
    T* data = out->data_as<T>();
    const double span = to - from;
    for_range(n, [&](int64_t lo, int64_t hi) {
      Lanes l(key, base);
      for (int64_t i = lo; i < hi; ++i) {
        double u = unit<T>(l, uint64_t(i) * k);
        data[i] = static_cast<T>(static_cast<compute_t<T>>(from + u * span));
      }
    });
  });
}

void normal_kernel(const Tensor& out, Generator& gen, double mean, double std) {
  visit_dtype<kFloatTypes>(out->dtype(), "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int k = lanes_per_uniform<T>();
    const int64_t n = out->numel();
    const uint64_t pairs = (uint64_t(n) + 1) / 2;
    const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(pairs * 2 * k));
    T* data = out->data_as<T>();
    for_range(n, [&](int64_t lo, int64_t hi) {
      Lanes l(key, base);
      for (int64_t i = lo; i < hi; ++i) {
        uint64_t pair = uint64_t(i) / 2;
        double u1, u2;  // u1 in (0, 1] keeps the log finite
        if (k == 2) {
          u1 = 1.0 - (l.at64(pair * 4) >> 11) * 0x1.0p-53;
          u2 = (l.at64(pair * 4 + 2) >> 11) * 0x1.0p-53;
        } else {
          u1 = 1.0 - (l.at(pair * 2) >> 8) * 0x1.0p-24;
          u2 = (l.at(pair * 2 + 1) >> 8) * 0x1.0p-24;
        }
        double r = std::sqrt(-2.0 * std::log(u1));
        double z = (i & 1) ? r * std::sin(kTwoPi * u2) : r * std::cos(kTwoPi * u2);
        data[i] = static_cast<T>(static_cast<compute_t<T>>(mean + std * z));
      }
    });
  });
}

void random_kernel(const Tensor& out, Generator& gen, int64_t from, uint64_t range) {
  visit_dtype<kRealTypes | kBoolTypes>(out->dtype(), "random_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int k = range > (uint64_t(1) << 32) ? 2 : 1;
    const int64_t n = out->numel();
    const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(n) * k));
    T* data = out->data_as<T>();
    if (range == 1) {  // one possible value: the same output and generator state, no draws
      const T only = convert<T>(from);
      for_range(n, [&](int64_t lo, int64_t hi) { std::fill(data + lo, data + hi, only); });
      return;
    }
    for_range(n, [&](int64_t lo, int64_t hi) {
      Lanes l(key, base);
      for (int64_t i = lo; i < hi; ++i) {
        uint64_t bits = k == 2 ? l.at64(uint64_t(i) * 2) : l.at(uint64_t(i));
        // Unsigned arithmetic wraps, so from + offset is exact for any int64 range.
        int64_t v = static_cast<int64_t>(static_cast<uint64_t>(from) + bits % range);
        data[i] = convert<T>(v);
      }
    });
  });
}

void bernoulli_kernel(const Tensor& out, Generator& gen, const Tensor& p) {
  visit_dtype<kRealTypes | kBoolTypes>(out->dtype(), "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = out->numel();
    const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(n)));
    T* data = out->data_as<T>();
    const double* prob = p->data_as<double>();
    const bool one_p = p->numel() == 1;
    for_range(n, [&](int64_t lo, int64_t hi) {
      Lanes l(key, base);
      for (int64_t i = lo; i < hi; ++i) {
        double u = l.at(uint64_t(i)) * 0x1.0p-32;
        data[i] = convert<T>(u < prob[one_p ? 0 : i]);
      }
    });
  });
}

void randperm_kernel(const Tensor& out, Generator& gen) {
  const int64_t n = out->numel();
  int64_t* data = out->data_as<int64_t>();
  for (int64_t i = 0; i < n; ++i) data[i] = i;
  if (n < 2) return;
  const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(n) * 2));
  Lanes l(key, base);
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t j = l.at64(uint64_t(i) * 2) % uint64_t(i + 1);
    std::swap(data[i], data[j]);
  }
}

}  // namespace

FLB_REGISTER_KERNEL(uniform_, kCPU, uniform_kernel);
FLB_REGISTER_KERNEL(normal_, kCPU, normal_kernel);
FLB_REGISTER_KERNEL(random_, kCPU, random_kernel);
FLB_REGISTER_KERNEL(bernoulli_, kCPU, bernoulli_kernel);
FLB_REGISTER_KERNEL(randperm, kCPU, randperm_kernel);

}  // namespace flambeau
