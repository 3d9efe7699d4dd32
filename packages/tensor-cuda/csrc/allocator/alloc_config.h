// The allocator's settings, parsed from FLAMBEAU_CUDA_ALLOC_CONF in the format of
// PyTorch's PYTORCH_CUDA_ALLOC_CONF: "<option>:<value>,<option>:<value>...".
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "allocator/sizes.h"

namespace flambeau::cuda {

constexpr const char* kAllocConfEnv = "FLAMBEAU_CUDA_ALLOC_CONF";

// A malformed configuration string (-> ValueError in Python).
struct ConfigError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct AllocatorConfig {
  // Free blocks at least this large are never split, and a request below it is
  // never served from one (SIZE_MAX: no limit). Ignored by expandable segments.
  size_t max_split_size = SIZE_MAX;
  // A request of max_split_size or more may take a cached oversize block at
  // most this much larger than itself.
  size_t max_non_split_rounding_size = kLargeBuffer;
  // In (0, 1): once reserved memory would pass this fraction of the allowed
  // maximum, cached blocks unused the longest are released first. 0: off.
  double garbage_collection_threshold = 0.0;
  // Unset: on whenever the device API offers virtual memory.
  std::optional<bool> expandable_segments;
  // Per size interval (see roundup_interval); 0 or 1: round to 512 bytes only.
  std::array<size_t, kRoundupIntervals> roundup_power2_divisions{};

  // Parses `text`; an empty string gives the defaults. Throws ConfigError.
  static AllocatorConfig parse(std::string_view text);
  // parse(getenv(FLAMBEAU_CUDA_ALLOC_CONF)), the defaults when it is unset.
  static AllocatorConfig from_env();

  size_t divisions_for(size_t size) const {
    return roundup_power2_divisions[roundup_interval(size)];
  }
  // The settings back in the input format (only those not at their default).
  std::string to_string() const;
};

}  // namespace flambeau::cuda
