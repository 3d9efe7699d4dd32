// PyTorch's memory formats: the layout a new tensor gets (flambeau.contiguous_format,
// preserve_format, channels_last, channels_last_3d).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace flambeau {

enum class MemoryFormat : int8_t {
  Contiguous,      // row-major
  Preserve,        // the layout of the tensor it is derived from
  ChannelsLast,    // 4-d NHWC order: C innermost
  ChannelsLast3d,  // 5-d NDHWC order
};
constexpr int kNumMemoryFormats = 4;

// The Python name: "contiguous_format", "preserve_format", "channels_last", ...
constexpr const char* memory_format_name(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::Preserve:
      return "preserve_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
  }
  return "?";
}

inline std::optional<MemoryFormat> memory_format_from_name(std::string_view name) {
  for (int i = 0; i < kNumMemoryFormats; ++i) {
    auto f = static_cast<MemoryFormat>(i);
    if (name == memory_format_name(f)) return f;
  }
  return std::nullopt;
}

}  // namespace flambeau
