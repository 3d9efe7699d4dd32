// Where a tensor's memory lives. Device types are small integers so per-device
// tables (kernels, allocators) are plain arrays.
#pragma once
#include <cstdint>
#include <string>

namespace flambeau {

using DeviceType = int8_t;
constexpr DeviceType kCPU = 0;
constexpr DeviceType kCUDA = 1;  // reserved for the CUDA plugin
constexpr int kMaxDeviceTypes = 16;
constexpr int kMaxDeviceIndex = 32767;  // Device::index is an int16_t

// Names of device types; plugins add theirs at registration.
const std::string& device_type_name(DeviceType t);
DeviceType device_type_from_name(const std::string& name);  // -1 when unknown
DeviceType register_device_type(const std::string& name);

// The meta device's type, registered at import (plugin/meta_backend.cpp); -1 before.
// Its tensors have no data: checks of argument values made on the host skip them.
extern DeviceType g_meta_device_type;

struct Device {
  DeviceType type = kCPU;
  int16_t index = -1;  // -1: the current device of that type
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool is_cpu() const { return type == kCPU; }
  bool has_data() const { return type != g_meta_device_type; }
  std::string str() const;
};

}  // namespace flambeau
