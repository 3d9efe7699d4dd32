#include "core/device.h"

#include <mutex>
#include <vector>

#include "core/error.h"

namespace flambeau {

namespace {
std::vector<std::string>& names() {
  static std::vector<std::string> n = {"cpu", "cuda"};
  return n;
}
std::mutex& names_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

const std::string& device_type_name(DeviceType t) {
  std::lock_guard<std::mutex> g(names_mutex());
  return names().at(static_cast<size_t>(t));
}

DeviceType device_type_from_name(const std::string& name) {
  std::lock_guard<std::mutex> g(names_mutex());
  auto& n = names();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) return static_cast<DeviceType>(i);
  return -1;
}

DeviceType register_device_type(const std::string& name) {
  DeviceType existing = device_type_from_name(name);
  if (existing >= 0) return existing;
  std::lock_guard<std::mutex> g(names_mutex());
  FLB_CHECK(names().size() < kMaxDeviceTypes, "register_device_type: too many device types");
  names().push_back(name);
  return static_cast<DeviceType>(names().size() - 1);
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace flambeau
