// Autocast state (flambeau.autocast / flambeau.amp): per device type, whether
// autocast is on in this thread and its lower-precision dtype, plus the weight
// cast cache switch and the nesting depth of the Python context managers. All
// of it is thread-local, as in PyTorch. Operators of the table marked
// `autocast:` cast their arguments while it is on for their tensors' device
// type (python/autocast.h); reading "is any on" is one thread-local load.
#pragma once
#include <cstdint>

#include "core/device.h"
#include "core/dtype.h"

namespace flambeau::autocast {

namespace detail {
extern thread_local uint32_t t_enabled;  // bit d: on for device type d
}

// How an operator's floating-point arguments are cast (the table's `autocast:`).
enum class Policy : uint8_t {
  None,
  LowerPrecisionFp,  // to the autocast dtype of the device type (bfloat16 on the CPU)
  Fp32,              // to float32
  Promote,           // to the widest floating type among them
};

inline bool any_enabled() { return detail::t_enabled != 0; }
inline bool enabled(DeviceType d) { return (detail::t_enabled >> d) & 1u; }
void set_enabled(DeviceType d, bool on);

// The device type's autocast dtype: bfloat16 for the CPU, float16 otherwise
// until set (any dtype may be set, as in PyTorch; the context manager checks).
ScalarType dtype(DeviceType d);
void set_dtype(DeviceType d, ScalarType t);

bool cache_enabled();
void set_cache_enabled(bool on);

int increment_nesting();
int decrement_nesting();

}  // namespace flambeau::autocast
