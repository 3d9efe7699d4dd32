// The order the sorting kernels use: numbers ascending with NaN above all of
// them (as PyTorch). 16-bit floats compare as float, bool as uint8.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"

namespace flambeau {

template <class T>
using sort_key_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;

template <class K>
inline bool key_isnan(K k) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(k);
  } else {
    return false;
  }
}

// a < b with NaN largest (all NaNs equivalent).
template <class K>
inline bool key_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    return a < b || (std::isnan(b) && !std::isnan(a));
  } else {
    return a < b;
  }
}

// An element and where it came from; rows sort as arrays of these.
template <class K>
struct Keyed {
  K key;
  int64_t index;
};

// Orders Keyed by key (ascending, or descending), ties by index, so every
// sort, nth_element and partial order is deterministic and stable.
template <class K>
struct KeyedLess {
  bool descending;
  bool operator()(const Keyed<K>& a, const Keyed<K>& b) const {
    if (descending ? key_less(b.key, a.key) : key_less(a.key, b.key)) return true;
    if (descending ? key_less(a.key, b.key) : key_less(b.key, a.key)) return false;
    return a.index < b.index;
  }
};

}  // namespace flambeau
