// The arguments by which indexing kernels read an index tensor (kernels/table.yaml).
#pragma once
#include <cstdint>

#include "generated/kernel_signatures.h"

namespace flambeau {

// How the kernels read and check an int64 index tensor.
struct IndexSpec {
  int64_t stride = 1;           // element stride of the indexed dim
  int64_t size = -1;            // its size; < 0: the index holds already checked offsets
  int64_t dim = 0;              // for error messages
  bool allow_negative = false;  // -size <= i < 0 counts from the end
  const char* op = "";
};

// PutMode (how a scatter-like kernel combines a value with what dst holds): declared in
// kernels/table.yaml.

}  // namespace flambeau
