// The caching allocator's statistics and snapshot as Python objects, in
// torch.cuda.memory_stats' and memory_snapshot's shapes: one conversion for the
// plugin (backend/python_api.cpp) and the allocator's test harness.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "allocator/caching_allocator.h"

namespace flambeau::cuda {

inline pybind11::dict stats_dict(const DeviceStats& s) {
  pybind11::dict d;
  auto put_stat = [&](const std::string& prefix, const Stat& st) {
    d[pybind11::str(prefix + ".current")] = st.current;
    d[pybind11::str(prefix + ".peak")] = st.peak;
    d[pybind11::str(prefix + ".allocated")] = st.allocated;
    d[pybind11::str(prefix + ".freed")] = st.freed;
  };
  auto put_array = [&](const char* name, const StatArray& a) {
    for (int t = 0; t < kNumStatTypes; ++t)
      put_stat(std::string(name) + "." + kStatTypeNames[t], a.by_type[t]);
  };
  put_array("allocation", s.allocation);
  put_array("segment", s.segment);
  put_array("active", s.active);
  put_array("inactive_split", s.inactive_split);
  put_array("allocated_bytes", s.allocated_bytes);
  put_array("reserved_bytes", s.reserved_bytes);
  put_array("active_bytes", s.active_bytes);
  put_array("inactive_split_bytes", s.inactive_split_bytes);
  put_array("requested_bytes", s.requested_bytes);
  put_stat("oversize_allocations", s.oversize_allocations);
  put_stat("oversize_segments", s.oversize_segments);
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_sync_all_streams"] = s.num_sync_all_streams;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  d["max_split_size"] = s.max_split_size;
  return d;
}

inline pybind11::list snapshot_list(const std::vector<SegmentInfo>& segments) {
  pybind11::list out;
  for (const SegmentInfo& s : segments) {
    pybind11::dict seg;
    seg["device"] = s.device;
    seg["address"] = s.address;
    seg["total_size"] = s.total_size;
    seg["allocated_size"] = s.allocated_size;
    seg["active_size"] = s.active_size;
    seg["requested_size"] = s.requested_size;
    seg["stream"] = s.stream;
    seg["segment_type"] = s.is_large ? "large" : "small";
    seg["is_expandable"] = s.is_expandable;
    pybind11::list blocks;
    for (const BlockInfo& b : s.blocks) {
      pybind11::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = block_state_name(b.state);
      blocks.append(block);
    }
    seg["blocks"] = blocks;
    out.append(seg);
  }
  return out;
}

}  // namespace flambeau::cuda
