#include "allocator/alloc_config.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace flambeau::cuda {

namespace {

constexpr const char* kKnownOptions =
    "backend, expandable_segments, garbage_collection_threshold, max_non_split_rounding_mb, "
    "max_split_size_mb, roundup_power2_divisions";

// Options PyTorch's allocator reads that have no meaning here: named in the
// error so that a configuration copied from PyTorch fails understandably.
constexpr const char* kPyTorchOnlyOptions[] = {
    "release_lock_on_cudamalloc",     "pinned_use_cuda_host_register",
    "pinned_num_register_threads",    "pinned_use_background_threads",
    "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse",
    "per_process_memory_fraction"};

[[noreturn]] void bad(const std::string& what) {
  throw ConfigError(std::string(kAllocConfEnv) + ": " + what);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits on `sep` outside square brackets.
std::vector<std::string_view> split_top_level(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (depth < 0) bad("unbalanced ']' in '" + std::string(s) + "'");
    if (s[i] == sep && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) bad("unbalanced '[' in '" + std::string(s) + "'");
  parts.push_back(s.substr(start));
  return parts;
}

bool parse_uint(std::string_view text, size_t* out) {
  if (text.empty() || text.size() > 19) return false;
  size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + size_t(c - '0');
  }
  *out = v;
  return true;
}

bool parse_double(std::string_view text, double* out) {
  std::string s(text);
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

bool is_power_of_two(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

size_t parse_divisions(std::string_view option, std::string_view text) {
  size_t v;
  if (!parse_uint(text, &v) || (v != 0 && !is_power_of_two(v))) {
    bad(std::string(option) + " takes powers of two (or 0 to disable), got '" + std::string(text) +
        "'");
  }
  return v;
}

// "4" sets every interval; "[256:1,512:2,>:8]" sets sizes up to 256 MiB to 1
// division, (256, 512] MiB to 2 and everything larger to 8.
void parse_roundup(std::string_view value, AllocatorConfig& cfg) {
  constexpr std::string_view kOption = "roundup_power2_divisions";
  auto& divisions = cfg.roundup_power2_divisions;
  if (value.empty() || value.front() != '[') {
    divisions.fill(parse_divisions(kOption, value));
    return;
  }
  if (value.back() != ']')
    bad("roundup_power2_divisions: missing ']' in '" + std::string(value) + "'");
  int next = 0;  // the first interval the next entry sets
  for (std::string_view entry : split_top_level(value.substr(1, value.size() - 2), ',')) {
    entry = trim(entry);
    size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      bad("roundup_power2_divisions entries are <size_mb>:<divisions> or >:<divisions>, got '" +
          std::string(entry) + "'");
    }
    std::string_view key = trim(entry.substr(0, colon));
    size_t div = parse_divisions(kOption, trim(entry.substr(colon + 1)));
    if (key == ">") {
      for (int i = next; i < kRoundupIntervals; ++i) divisions[i] = div;
      next = kRoundupIntervals;
      continue;
    }
    size_t mb;
    if (!parse_uint(key, &mb) || !is_power_of_two(mb) || floor_log2(mb) >= kRoundupIntervals - 1) {
      bad("roundup_power2_divisions: sizes are powers of two from 1 to 16384 (MiB), got '" +
          std::string(key) + "'");
    }
    int last = floor_log2(mb);  // the interval that ends at mb MiB
    if (last < next)
      bad("roundup_power2_divisions: sizes must increase, got '" + std::string(key) + "'");
    for (int i = next; i <= last; ++i) divisions[i] = div;
    next = last + 1;
  }
}

void set_option(std::string_view key, std::string_view value, AllocatorConfig& cfg) {
  if (key == "max_split_size_mb") {
    size_t mb;
    // As PyTorch: a limit at or below a large segment (20 MiB) would stop the
    // large pool from splitting its own segments.
    if (!parse_uint(value, &mb) || mb <= kLargeBuffer / kMiB) {
      bad("max_split_size_mb must be an integer > " + std::to_string(kLargeBuffer / kMiB) +
          ", got '" + std::string(value) + "'");
    }
    cfg.max_split_size = mb >= SIZE_MAX / kMiB ? SIZE_MAX : mb * kMiB;
  } else if (key == "max_non_split_rounding_mb") {
    size_t mb;
    if (!parse_uint(value, &mb) || mb >= SIZE_MAX / kMiB) {
      bad("max_non_split_rounding_mb must be a non-negative integer, got '" + std::string(value) +
          "'");
    }
    cfg.max_non_split_rounding_size = mb * kMiB;
  } else if (key == "garbage_collection_threshold") {
    double v;
    if (!parse_double(value, &v) || !(v > 0.0 && v < 1.0)) {
      bad("garbage_collection_threshold must be a number in (0, 1), got '" + std::string(value) +
          "'");
    }
    cfg.garbage_collection_threshold = v;
  } else if (key == "expandable_segments") {
    if (value == "True" || value == "true" || value == "1") {
      cfg.expandable_segments = true;
    } else if (value == "False" || value == "false" || value == "0") {
      cfg.expandable_segments = false;
    } else {
      bad("expandable_segments must be True or False, got '" + std::string(value) + "'");
    }
  } else if (key == "roundup_power2_divisions") {
    parse_roundup(value, cfg);
  } else if (key == "backend") {
    if (value != "native") {
      bad("backend '" + std::string(value) + "' is not supported (only 'native')");
    }
  } else {
    for (const char* name : kPyTorchOnlyOptions) {
      if (key == name) {
        bad("option '" + std::string(key) + "' is PyTorch's; flambeau does not implement it");
      }
    }
    bad("unknown option '" + std::string(key) + "' (known options: " + kKnownOptions + ")");
  }
}

}  // namespace

AllocatorConfig AllocatorConfig::parse(std::string_view text) {
  AllocatorConfig cfg;
  for (std::string_view item : split_top_level(text, ',')) {
    item = trim(item);
    if (item.empty()) continue;  // "a:1,,b:2" and a trailing comma are fine
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      bad("expected <option>:<value>, got '" + std::string(item) + "'");
    }
    set_option(trim(item.substr(0, colon)), trim(item.substr(colon + 1)), cfg);
  }
  return cfg;
}

AllocatorConfig AllocatorConfig::from_env() {
  const char* text = std::getenv(kAllocConfEnv);
  return parse(text ? text : "");
}

std::string AllocatorConfig::to_string() const {
  std::ostringstream os;
  const char* sep = "";
  if (expandable_segments) {
    os << sep << "expandable_segments:" << (*expandable_segments ? "True" : "False");
    sep = ",";
  }
  if (max_split_size != SIZE_MAX) {
    os << sep << "max_split_size_mb:" << max_split_size / kMiB;
    sep = ",";
  }
  if (max_non_split_rounding_size != kLargeBuffer) {
    os << sep << "max_non_split_rounding_mb:" << max_non_split_rounding_size / kMiB;
    sep = ",";
  }
  if (garbage_collection_threshold > 0.0) {
    os << sep << "garbage_collection_threshold:" << garbage_collection_threshold;
    sep = ",";
  }
  bool any_division = false;
  for (size_t d : roundup_power2_divisions) any_division |= d > 1;
  if (any_division) {
    os << sep << "roundup_power2_divisions:[";
    // One entry per run of equal intervals, the last one as ">".
    for (int i = 0; i < kRoundupIntervals;) {
      int j = i;
      while (j + 1 < kRoundupIntervals &&
             roundup_power2_divisions[j + 1] == roundup_power2_divisions[i]) {
        ++j;
      }
      if (i > 0) os << ",";
      if (j == kRoundupIntervals - 1) {
        os << ">:" << roundup_power2_divisions[i];
      } else {
        os << (size_t(1) << j) << ":" << roundup_power2_divisions[i];
      }
      i = j + 1;
    }
    os << "]";
  }
  return os.str();
}

}  // namespace flambeau::cuda
