#include "core/autocast.h"

#include <array>

namespace flambeau::autocast {

namespace detail {
thread_local uint32_t t_enabled = 0;
}

namespace {
std::array<ScalarType, kMaxDeviceTypes> default_dtypes() {
  std::array<ScalarType, kMaxDeviceTypes> d;
  d.fill(ScalarType::Float16);
  d[kCPU] = ScalarType::BFloat16;
  return d;
}
thread_local std::array<ScalarType, kMaxDeviceTypes> t_dtype = default_dtypes();
thread_local bool t_cache_enabled = true;
thread_local int t_nesting = 0;
}  // namespace

void set_enabled(DeviceType d, bool on) {
  const uint32_t bit = 1u << d;
  detail::t_enabled = on ? detail::t_enabled | bit : detail::t_enabled & ~bit;
}

ScalarType dtype(DeviceType d) { return t_dtype[d]; }
void set_dtype(DeviceType d, ScalarType t) { t_dtype[d] = t; }

bool cache_enabled() { return t_cache_enabled; }
void set_cache_enabled(bool on) { t_cache_enabled = on; }

int increment_nesting() { return ++t_nesting; }
int decrement_nesting() { return --t_nesting; }

}  // namespace flambeau::autocast
