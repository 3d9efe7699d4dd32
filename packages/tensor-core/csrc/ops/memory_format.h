// Layouts of new tensors by memory format (PyTorch's rules), shared by clone, the *_like
// creators, contiguous and to.
#pragma once
#include "core/memory_format.h"
#include "ops/common.h"

namespace flambeau {

// Strides for a new tensor of like's shape in format f. preserve_format keeps like's strides
// when like is dense and non-overlapping, else lays its dims out densely in like's memory order
// (gaps closed, broadcast dims given room). channels_last needs 4 dims, channels_last_3d 5.
DimVector memory_format_strides(const Tensor& like, MemoryFormat f, const char* op);
// An uninitialized tensor of like's shape laid out in format f.
Tensor empty_in_format(const Tensor& like, ScalarType dtype, Device device, MemoryFormat f,
                       const char* op);
// Whether t's strides are those of format f (any rank: channels_last is false off 4 dims);
// preserve_format asks for row-major, as in PyTorch.
bool is_contiguous_in(const Tensor& t, MemoryFormat f);

}  // namespace flambeau
