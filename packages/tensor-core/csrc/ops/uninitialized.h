// Deterministic mode's filling of uninitialized memory
// (flambeau.utils.deterministic.fill_uninitialized_memory): empty, empty_like,
// empty_strided and outputs that out= resizes into new memory get NaN
// (floating and complex dtypes) or the dtype's largest value (integers, bool).
#pragma once
#include "core/deterministic.h"
#include "core/error.h"
#include "core/tensor.h"

namespace flambeau::ops {

// Fills all of t's storage (gaps between strided elements included).
void fill_uninitialized(const Tensor& t);
// Fills t's elements only (the part of a storage that resize_ added).
void fill_uninitialized_elements(const Tensor& t);

// t's memory is fresh: fill it when deterministic mode asks for that.
inline const Tensor& maybe_fill_uninitialized(const Tensor& t) {
  if (FLB_UNLIKELY(should_fill_uninitialized_memory())) fill_uninitialized(t);
  return t;
}

}  // namespace flambeau::ops
