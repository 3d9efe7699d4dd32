// _allocator_harness: the caching allocator over fakecuda, for the pytest suite.
// Pointers and streams cross as Python ints; device calls release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "allocator/caching_allocator.h"
#include "allocator/python_views.h"
#include "fakecuda/fake_device.h"

namespace py = pybind11;
using flambeau::cuda::AllocatorConfig;
using flambeau::cuda::AllocatorError;
using flambeau::cuda::CachingAllocator;
using flambeau::cuda::DeviceStats;
using flambeau::cuda::OutOfMemoryError;
using flambeau::cuda::SegmentInfo;
using flambeau::cuda::snapshot_list;
using flambeau::cuda::stats_dict;
using flambeau::fakecuda::Call;
using flambeau::fakecuda::FakeDevice;
using flambeau::fakecuda::FakeOptions;

namespace {

void* as_ptr(uintptr_t v) { return reinterpret_cast<void*>(v); }

Call call_from_name(const std::string& name) {
  for (int i = 0; i < flambeau::fakecuda::kNumCalls; ++i) {
    if (name == flambeau::fakecuda::call_name(Call(i))) return Call(i);
  }
  throw py::value_error("unknown fakecuda call '" + name + "'");
}

// The allocator with the fake device it runs on (kept alive by py::keep_alive).
struct Allocator {
  Allocator(FakeDevice& fake, const std::optional<std::string>& conf)
      : impl(fake.api(), fake.options().device_count,
             conf ? AllocatorConfig::parse(*conf) : AllocatorConfig::from_env()) {}
  CachingAllocator impl;
};

py::dict config_dict(const AllocatorConfig& c) {
  py::dict d;
  d["max_split_size"] = c.max_split_size == SIZE_MAX ? py::object(py::none())
                                                     : py::object(py::int_(c.max_split_size));
  d["max_non_split_rounding_size"] = c.max_non_split_rounding_size;
  d["garbage_collection_threshold"] = c.garbage_collection_threshold;
  d["expandable_segments"] = c.expandable_segments ? py::object(py::bool_(*c.expandable_segments))
                                                   : py::object(py::none());
  py::list divisions;
  for (size_t v : c.roundup_power2_divisions) divisions.append(v);
  d["roundup_power2_divisions"] = divisions;
  d["text"] = c.to_string();
  return d;
}

// ns per malloc+free pair of one cached size, after a warm-up.
double bench_alloc_free(Allocator& a, size_t size, int64_t iterations, uintptr_t stream,
                        int device) {
  for (int i = 0; i < 1000; ++i) a.impl.free(a.impl.malloc(device, size, as_ptr(stream)));
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    a.impl.free(a.impl.malloc(device, size, as_ptr(stream)));
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iterations);
}

// Several threads allocate and free at random (each on its own stream, or all
// on stream 0) while a shared map checks that live blocks never overlap.
py::dict hammer(Allocator& a, int threads, int iterations, uint64_t seed, size_t max_size,
                bool shared_stream) {
  std::mutex live_mutex;
  std::map<uintptr_t, size_t> live;
  int64_t overlaps = 0, allocations = 0, ooms = 0;
  std::vector<std::string> errors;
  auto worker = [&](int t) {
    std::mt19937_64 rng(seed + uint64_t(t));
    std::uniform_real_distribution<double> log_size(9.0, std::log2(double(max_size)));
    void* stream = as_ptr(shared_stream ? 0 : uintptr_t(t + 1));
    std::vector<std::pair<void*, size_t>> mine;
    try {
      for (int i = 0; i < iterations; ++i) {
        if (!mine.empty() && (rng() % 2 == 0 || mine.size() > 32)) {
          size_t k = rng() % mine.size();
          {
            std::lock_guard<std::mutex> lock(live_mutex);
            live.erase(uintptr_t(mine[k].first));
          }
          a.impl.free(mine[k].first);
          mine[k] = mine.back();
          mine.pop_back();
          continue;
        }
        size_t size = size_t(std::exp2(log_size(rng)));
        void* p = nullptr;
        try {
          p = a.impl.malloc(0, size, stream);
        } catch (const OutOfMemoryError&) {
          std::lock_guard<std::mutex> lock(live_mutex);
          ++ooms;
          continue;
        }
        std::lock_guard<std::mutex> lock(live_mutex);
        ++allocations;
        uintptr_t lo = uintptr_t(p);
        auto next = live.lower_bound(lo);
        if (next != live.end() && next->first < lo + size) ++overlaps;
        if (next != live.begin()) {
          auto prev = std::prev(next);
          if (prev->first + prev->second > lo) ++overlaps;
        }
        live[lo] = size;
        mine.emplace_back(p, size);
      }
      for (auto& [p, size] : mine) {
        {
          std::lock_guard<std::mutex> lock(live_mutex);
          live.erase(uintptr_t(p));
        }
        a.impl.free(p);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(live_mutex);
      errors.emplace_back(e.what());
    }
  };
  {
    py::gil_scoped_release release;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
    for (auto& th : pool) th.join();
  }
  py::dict out;
  out["allocations"] = allocations;
  out["overlaps"] = overlaps;
  out["ooms"] = ooms;
  out["errors"] = errors;
  return out;
}

PyObject* oom_error_type = nullptr;

const char* status_name(flb_cuda_status s) {
  static const char* kNames[] = {"ok", "oom", "not_ready", "error"};
  return kNames[s];
}

// The table's functions called directly, for tests of the fake itself: each
// returns (status, value) with the output pointer or size as an int.
void bind_raw_calls(py::class_<FakeDevice>& fake) {
  using R = std::pair<std::string, uintptr_t>;
  fake.def(
          "raw_malloc",
          [](FakeDevice& f, size_t size, int device) {
            void* p = nullptr;
            flb_cuda_status s = f.api().malloc(f.api().self, device, size, &p);
            return R(status_name(s), uintptr_t(p));
          },
          py::arg("size"), py::arg("device") = 0)
      .def(
          "raw_free",
          [](FakeDevice& f, uintptr_t ptr, int device) {
            return status_name(f.api().free(f.api().self, device, as_ptr(ptr)));
          },
          py::arg("ptr"), py::arg("device") = 0)
      .def(
          "raw_mem_get_info",
          [](FakeDevice& f, int device) {
            size_t free_bytes = 0, total = 0;
            flb_cuda_status s = f.api().mem_get_info(f.api().self, device, &free_bytes, &total);
            return py::make_tuple(status_name(s), free_bytes, total);
          },
          py::arg("device") = 0)
      .def(
          "raw_reserve_va",
          [](FakeDevice& f, size_t size, int device) {
            void* base = nullptr;
            flb_cuda_status s = f.api().reserve_va(f.api().self, device, size, &base);
            return R(status_name(s), uintptr_t(base));
          },
          py::arg("size"), py::arg("device") = 0)
      .def(
          "raw_release_va",
          [](FakeDevice& f, uintptr_t base, size_t size, int device) {
            return status_name(f.api().release_va(f.api().self, device, as_ptr(base), size));
          },
          py::arg("base"), py::arg("size"), py::arg("device") = 0)
      .def(
          "raw_map",
          [](FakeDevice& f, uintptr_t addr, size_t size, int device) {
            return status_name(f.api().map(f.api().self, device, as_ptr(addr), size));
          },
          py::arg("addr"), py::arg("size"), py::arg("device") = 0)
      .def(
          "raw_unmap",
          [](FakeDevice& f, uintptr_t addr, size_t size, int device) {
            return status_name(f.api().unmap(f.api().self, device, as_ptr(addr), size));
          },
          py::arg("addr"), py::arg("size"), py::arg("device") = 0)
      .def(
          "raw_event_create",
          [](FakeDevice& f, int device) {
            void* e = nullptr;
            flb_cuda_status s = f.api().event_create(f.api().self, device, &e);
            return R(status_name(s), uintptr_t(e));
          },
          py::arg("device") = 0)
      .def(
          "raw_event_destroy",
          [](FakeDevice& f, uintptr_t event, int device) {
            return status_name(f.api().event_destroy(f.api().self, device, as_ptr(event)));
          },
          py::arg("event"), py::arg("device") = 0)
      .def("raw_event_record",
           [](FakeDevice& f, uintptr_t event, uintptr_t stream) {
             return status_name(f.api().event_record(f.api().self, as_ptr(event), as_ptr(stream)));
           })
      .def("raw_event_query",
           [](FakeDevice& f, uintptr_t event) {
             return status_name(f.api().event_query(f.api().self, as_ptr(event)));
           })
      .def("raw_event_synchronize",
           [](FakeDevice& f, uintptr_t event) {
             return status_name(f.api().event_synchronize(f.api().self, as_ptr(event)));
           })
      .def("last_error",
           [](FakeDevice& f) { return std::string(f.api().last_error(f.api().self)); })
      .def_property_readonly("has_virtual_memory",
                             [](FakeDevice& f) { return f.api().map != nullptr; });
}

}  // namespace

PYBIND11_MODULE(_allocator_harness, m) {
  m.doc() = "flambeau's CUDA caching allocator over the fakecuda device (test harness).";
  m.attr("CONF_ENV") = flambeau::cuda::kAllocConfEnv;

  // OutOfMemoryError(RuntimeError) carrying the report's numbers as attributes.
  oom_error_type =
      PyErr_NewException("_allocator_harness.OutOfMemoryError", PyExc_RuntimeError, nullptr);
  m.attr("OutOfMemoryError") = py::handle(oom_error_type);
  static py::exception<AllocatorError> allocator_error(m, "AllocatorError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemoryError& e) {
      const auto& r = e.report;
      py::object exc = py::reinterpret_borrow<py::object>(oom_error_type)(e.what());
      exc.attr("device") = r.device;
      exc.attr("requested") = r.requested;
      exc.attr("allocated") = r.allocated;
      exc.attr("reserved") = r.reserved;
      exc.attr("free_cached") = r.free_cached;
      exc.attr("largest_free") = r.largest_free;
      exc.attr("device_free") = r.device_free;
      exc.attr("device_total") = r.device_total;
      exc.attr("fragmentation") = r.fragmentation();
      PyErr_SetObject(oom_error_type, exc.ptr());
    } catch (const AllocatorError& e) {
      PyErr_SetString(allocator_error.ptr(), e.what());
    }
  });

  py::class_<FakeDevice> fake(m, "FakeDevice");
  bind_raw_calls(fake);
  fake.def(py::init(
               [](size_t total_bytes, size_t granularity, bool virtual_memory, int device_count) {
                 FakeOptions o;
                 o.total_bytes = total_bytes;
                 o.granularity = granularity;
                 o.virtual_memory = virtual_memory;
                 o.device_count = device_count;
                 return new FakeDevice(o);
               }),
           py::kw_only(), py::arg("total_bytes") = size_t(1) << 30,
           py::arg("granularity") = size_t(2) << 20, py::arg("virtual_memory") = true,
           py::arg("device_count") = 1)
      .def_property_readonly("total_bytes",
                             [](const FakeDevice& f) { return f.options().total_bytes; })
      .def_property_readonly("granularity",
                             [](const FakeDevice& f) { return f.options().granularity; })
      .def(
          "inject",
          [](FakeDevice& f, const std::string& call, uint64_t nth, uint64_t count,
             const std::string& error) {
            flb_cuda_status status;
            if (error == "oom") {
              status = FLB_CUDA_OUT_OF_MEMORY;
            } else if (error == "error") {
              status = FLB_CUDA_ERROR;
            } else {
              throw py::value_error("error must be 'oom' or 'error'");
            }
            f.inject(call_from_name(call), nth, count, status);
          },
          py::arg("call"), py::arg("nth") = 1, py::arg("count") = 1, py::arg("error") = "oom")
      .def("clear_injections", &FakeDevice::clear_injections)
      .def("complete", [](FakeDevice& f, uintptr_t stream) { f.complete(as_ptr(stream)); })
      .def("complete_all", &FakeDevice::complete_all)
      .def("calls",
           [](const FakeDevice& f, const std::string& c) { return f.calls(call_from_name(c)); })
      .def("failures",
           [](const FakeDevice& f, const std::string& c) { return f.failures(call_from_name(c)); })
      .def("counts",
           [](const FakeDevice& f) {
             py::dict d;
             for (int i = 0; i < flambeau::fakecuda::kNumCalls; ++i) {
               d[flambeau::fakecuda::call_name(Call(i))] = f.calls(Call(i));
             }
             return d;
           })
      .def("reset_counts", &FakeDevice::reset_counts)
      .def("set_logging", &FakeDevice::set_logging, py::arg("on"))
      .def("take_log",
           [](FakeDevice& f) {
             py::list out;
             for (auto& [call, status] : f.take_log()) {
               out.append(py::make_tuple(flambeau::fakecuda::call_name(call), status_name(status)));
             }
             return out;
           })
      .def("used_bytes", &FakeDevice::used_bytes, py::arg("device") = 0)
      .def("mapped_bytes", &FakeDevice::mapped_bytes, py::arg("device") = 0)
      .def("reserved_va_bytes", &FakeDevice::reserved_va_bytes, py::arg("device") = 0)
      .def("live_allocations", &FakeDevice::live_allocations, py::arg("device") = 0)
      .def("live_events", &FakeDevice::live_events)
      .def("pending_events", &FakeDevice::pending_events);

  py::class_<Allocator>(m, "CachingAllocator")
      .def(py::init<FakeDevice&, const std::optional<std::string>&>(), py::arg("device"),
           py::arg("conf") = py::none(), py::keep_alive<1, 2>())
      .def(
          "malloc",
          [](Allocator& a, size_t size, uintptr_t stream, int device) {
            return uintptr_t(a.impl.malloc(device, size, as_ptr(stream)));
          },
          py::arg("size"), py::arg("stream") = 0, py::arg("device") = 0,
          py::call_guard<py::gil_scoped_release>())
      .def(
          "free", [](Allocator& a, uintptr_t ptr) { a.impl.free(as_ptr(ptr)); }, py::arg("ptr"),
          py::call_guard<py::gil_scoped_release>())
      .def(
          "record_stream",
          [](Allocator& a, uintptr_t ptr, uintptr_t stream) {
            a.impl.record_stream(as_ptr(ptr), as_ptr(stream));
          },
          py::arg("ptr"), py::arg("stream"), py::call_guard<py::gil_scoped_release>())
      .def(
          "empty_cache", [](Allocator& a) { a.impl.empty_cache(); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "memory_stats",
          [](Allocator& a, int device) { return stats_dict(a.impl.memory_stats(device)); },
          py::arg("device") = 0)
      .def(
          "reset_peak_memory_stats",
          [](Allocator& a, int device) { a.impl.reset_peak_memory_stats(device); },
          py::arg("device") = 0)
      .def(
          "reset_accumulated_memory_stats",
          [](Allocator& a, int device) { a.impl.reset_accumulated_memory_stats(device); },
          py::arg("device") = 0)
      .def("snapshot", [](Allocator& a) { return snapshot_list(a.impl.snapshot()); })
      .def(
          "set_memory_fraction",
          [](Allocator& a, double fraction, int device) {
            a.impl.set_memory_fraction(fraction, device);
          },
          py::arg("fraction"), py::arg("device") = 0)
      .def(
          "expandable_segments",
          [](Allocator& a, int device) { return a.impl.expandable_segments(device); },
          py::arg("device") = 0)
      .def_property_readonly("config",
                             [](const Allocator& a) { return a.impl.config().to_string(); })
      .def_property_readonly("device_count",
                             [](const Allocator& a) { return a.impl.device_count(); });

  m.def(
      "parse_config",
      [](const std::string& text) { return config_dict(AllocatorConfig::parse(text)); },
      py::arg("text"));
  m.def("config_from_env", [] { return config_dict(AllocatorConfig::from_env()); });
  m.def("format_bytes", &flambeau::cuda::format_bytes);
  m.def("bench_alloc_free", &bench_alloc_free, py::arg("allocator"), py::arg("size"),
        py::arg("iterations"), py::arg("stream") = 0, py::arg("device") = 0,
        py::call_guard<py::gil_scoped_release>());
  m.def("hammer", &hammer, py::arg("allocator"), py::arg("threads"), py::arg("iterations"),
        py::arg("seed") = 0, py::arg("max_size") = size_t(4) << 20,
        py::arg("shared_stream") = false);
}
