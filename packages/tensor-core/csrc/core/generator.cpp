#include "core/generator.h"

#include <map>
#include <utility>

namespace flambeau {

Generator& default_generator() {
  static Generator* g = [] {
    auto* p = new Generator();
    p->incref();  // never freed: Python holds it through Ref handles
    return p;
  }();
  return *g;
}

namespace {
struct DeviceGenerators {
  std::mutex mutex;
  std::map<std::pair<int, int>, Generator*> by_device;  // (type, index); never freed
  uint64_t seed = kDefaultSeed;                         // for generators made later
};
DeviceGenerators& device_generators() {
  static auto* d = new DeviceGenerators();  // outlives interpreter teardown
  return *d;
}
}  // namespace

Generator& default_generator(Device device) {
  if (device.is_cpu()) return default_generator();
  DeviceGenerators& d = device_generators();
  std::lock_guard<std::mutex> lock(d.mutex);
  Generator*& g = d.by_device[{static_cast<int>(device.type), device.index}];
  if (g == nullptr) {
    g = new Generator(d.seed, device);
    g->incref();
  }
  return *g;
}

void seed_device_generators(uint64_t seed) {
  DeviceGenerators& d = device_generators();
  std::lock_guard<std::mutex> lock(d.mutex);
  d.seed = seed;
  for (auto& entry : d.by_device) entry.second->manual_seed(seed);
}

}  // namespace flambeau
