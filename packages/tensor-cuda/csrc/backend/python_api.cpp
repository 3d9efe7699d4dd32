#include "backend/python_api.h"

#include <cuda_runtime_api.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "allocator/alloc_config.h"
#include "allocator/errors.h"
#include "allocator/python_views.h"
#include "backend/kernels/cublas_handles.h"
#include "backend/kernels/cufft_plans.h"
#include "backend/kernels/solver_handles.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"
#include "runtime/host_allocator.h"
#include "runtime/lazy_init.h"
#include "runtime/streams.h"

namespace py = pybind11;

namespace flambeau::cuda::backend {

namespace {

// A block of pinned host memory exported to Python through the buffer protocol
// (flambeau.frombuffer keeps the exporter alive): Tensor.pin_memory's storage,
// back to the host allocator's cache when the last tensor over it dies.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t nbytes) : nbytes_(nbytes) {
    cudaError_t err = runtime::host_allocator().allocate(nbytes, &block_);
    if (err != cudaSuccess || block_ == nullptr) {
      (void)cudaGetLastError();
      std::string message = "CUDA out of memory. Tried to allocate " + std::to_string(nbytes) +
                            " bytes of pinned host memory: " + cudaGetErrorString(err);
      py::object oom = py::module_::import("flambeau").attr("OutOfMemoryError");
      PyErr_SetString(oom.ptr(), message.c_str());
      throw py::error_already_set();
    }
  }
  ~PinnedBuffer() { runtime::host_allocator().free(block_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  py::buffer_info info() {
    return py::buffer_info(block_->ptr, 1, py::format_descriptor<uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(nbytes_)}, {1});
  }

 private:
  size_t nbytes_;
  runtime::HostAllocator::Block* block_ = nullptr;
};

// Raises RuntimeError for a failing cudart call (as PyTorch's "CUDA error: ...").
void check(cudaError_t err) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(err));
}

void lazy_init() {
  std::string error = runtime::ensure_initialized();
  if (!error.empty()) throw std::runtime_error(error);
}

void check_index(int device) {
  lazy_init();
  if (device < 0 || device >= runtime::probe().device_count)
    throw std::runtime_error("CUDA error: invalid device ordinal");
}

py::dict probe_dict() {
  const runtime::Probe& p = runtime::probe();
  py::dict d;
  d["available"] = p.availability == runtime::Availability::kAvailable;
  d["device_count"] = p.device_count;
  d["driver_version"] = p.driver_version;
  d["runtime_version"] = p.runtime_version;
  d["reason"] = p.reason;
  return d;
}

py::dict properties(int device) {
  check_index(device);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device));
  py::dict d;
  d["name"] = std::string(prop.name);
  d["major"] = prop.major;
  d["minor"] = prop.minor;
  d["total_memory"] = static_cast<int64_t>(prop.totalGlobalMem);
  d["multi_processor_count"] = prop.multiProcessorCount;
  d["is_integrated"] = prop.integrated != 0;
  d["is_multi_gpu_board"] = prop.isMultiGpuBoard != 0;
  d["max_threads_per_multi_processor"] = prop.maxThreadsPerMultiProcessor;
  d["regs_per_multiprocessor"] = prop.regsPerMultiprocessor;
  d["warp_size"] = prop.warpSize;
  d["L2_cache_size"] = prop.l2CacheSize;
  d["pci_bus_id"] = prop.pciBusID;
  d["pci_device_id"] = prop.pciDeviceID;
  d["pci_domain_id"] = prop.pciDomainID;
  d["uuid"] = py::bytes(prop.uuid.bytes, sizeof prop.uuid.bytes);
  return d;
}

// The statistics of `device`; empty before the first allocation (as PyTorch's
// before CUDA is initialized).
py::dict memory_stats(int device) {
  CachingAllocator* a = allocator_if_created();
  if (!a) return py::dict();
  if (device < 0 || device >= a->device_count()) check_index(device);
  return stats_dict(a->memory_stats(device));
}

py::list snapshot() {
  CachingAllocator* a = allocator_if_created();
  return a ? snapshot_list(a->snapshot()) : py::list();
}

cudaStream_t stream_of(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }
cudaEvent_t event_of(uintptr_t handle) { return reinterpret_cast<cudaEvent_t>(handle); }

}  // namespace

void bind_python_api(py::module_& m) {
  m.def("_probe", &probe_dict, "What the one-time probe of the driver and devices found.");
  m.def("_lazy_init", &lazy_init, "Initializes CUDA; RuntimeError with the reason it cannot.");
  m.def("_is_initialized", &runtime::is_initialized);
  m.def("_in_bad_fork", &runtime::in_bad_fork);
  m.def("_mark_initialized_for_tests", &runtime::mark_initialized_for_tests,
        "Marks CUDA initialized without a device, so tests can check the fork guard.");
  m.def("_device_properties", &properties, py::arg("device"));
  m.def("_set_cublas_library_path", &kernels::set_cublas_library_path, py::arg("path"),
        "Where the kernels open libcublas.so.13 first (the nvidia-cublas wheel's copy).");
  m.def("_load_cublas", &kernels::load_cublas,
        "Opens cuBLAS now (no device needed): '' when every entry point resolved, else why not.");
  // The linear algebra and FFT group's libraries (cuSOLVER, cuFFT), as cuBLAS's.
  m.def("_set_cusolver_library_path", &kernels::set_cusolver_library_path, py::arg("path"),
        "Where the kernels open libcusolver.so.12 first (the nvidia-cusolver wheel's copy).");
  m.def("_load_cusolver", &kernels::load_cusolver,
        "Opens cuSOLVER now (no device needed): '' when every entry point resolved, else why not.");
  m.def("_set_cufft_library_path", &kernels::set_cufft_library_path, py::arg("path"),
        "Where the kernels open libcufft.so.12 first (the nvidia-cufft wheel's copy).");
  m.def("_load_cufft", &kernels::load_cufft,
        "Opens cuFFT now (no device needed): '' when every entry point resolved, else why not.");
  m.def("_set_device", [](int device) {
    check_index(device);
    check(cudaSetDevice(device));
  });
  m.def("_current_device", [] {
    lazy_init();
    int device = 0;
    check(cudaGetDevice(&device));
    return device;
  });
  m.def("_synchronize", [](int device) {
    check_index(device);
    runtime::DeviceGuard guard(device);
    py::gil_scoped_release unlocked;
    check(cudaDeviceSynchronize());
  });
  m.def("_mem_get_info", [](int device) {
    check_index(device);
    runtime::DeviceGuard guard(device);
    size_t free_bytes = 0, total = 0;
    check(cudaMemGetInfo(&free_bytes, &total));
    return py::make_tuple(free_bytes, total);
  });

  // The caching allocator.
  m.def("_memory_stats", &memory_stats, py::arg("device"));
  m.def("_memory_snapshot", &snapshot);
  m.def("_reset_peak_memory_stats", [](int device) {
    if (CachingAllocator* a = allocator_if_created()) a->reset_peak_memory_stats(device);
  });
  m.def("_reset_accumulated_memory_stats", [](int device) {
    if (CachingAllocator* a = allocator_if_created()) a->reset_accumulated_memory_stats(device);
  });
  m.def("_empty_cache", [] {
    if (runtime::in_bad_fork()) return;
    if (CachingAllocator* a = allocator_if_created()) a->empty_cache();
    runtime::host_allocator().empty_cache();
  });
  m.def("_set_memory_fraction", [](double fraction, int device) {
    check_index(device);
    allocator().set_memory_fraction(fraction, device);
  });
  m.def(
      "_allocator_settings", [] { return AllocatorConfig::from_env().to_string(); },
      "FLAMBEAU_CUDA_ALLOC_CONF as parsed (ValueError when malformed).");
  m.def("_host_memory_stats", [] {
    runtime::HostAllocator::Stats s = runtime::host_allocator().stats();
    py::dict d;
    d["allocated_bytes"] = s.allocated_bytes;
    d["reserved_bytes"] = s.reserved_bytes;
    d["allocations"] = s.allocations;
    return d;
  });
  m.def("_is_pinned", [](uintptr_t ptr) {
    return runtime::host_allocator().is_pinned(reinterpret_cast<const void*>(ptr));
  });
  py::class_<PinnedBuffer>(m, "_PinnedBuffer", py::buffer_protocol())
      .def_buffer([](PinnedBuffer& b) { return b.info(); });
  m.def(
      "_pinned_buffer",
      [](size_t nbytes) {
        lazy_init();  // page-locking host memory needs the driver
        return std::make_unique<PinnedBuffer>(nbytes);
      },
      py::arg("nbytes"), "nbytes (> 0) of page-locked host memory, as a buffer.");
  m.def(
      "_record_stream",
      [](uintptr_t ptr, uintptr_t stream) {
        allocator().record_stream(reinterpret_cast<void*>(ptr), reinterpret_cast<void*>(stream));
      },
      py::arg("ptr"), py::arg("stream"),
      "Marks the device block at ptr (a storage's base) as used on stream.");

  // Streams: handles are cudaStream_t values as ints (0: the default stream).
  m.def("_stream_priority_range", [] {
    lazy_init();
    int least = 0, greatest = 0;
    check(runtime::priority_range(&least, &greatest));
    return py::make_tuple(least, greatest);
  });
  m.def("_stream_create", [](int device, int priority) {
    check_index(device);
    cudaStream_t s = nullptr;
    check(runtime::pool_stream(device, priority, &s));
    return reinterpret_cast<uintptr_t>(s);
  });
  m.def("_stream_priority", [](uintptr_t s) {
    lazy_init();
    int priority = 0;
    check(cudaStreamGetPriority(stream_of(s), &priority));
    return priority;
  });
  m.def("_current_stream",
        [](int device) { return reinterpret_cast<uintptr_t>(runtime::current_stream(device)); });
  m.def("_set_current_stream", [](int device, uintptr_t s) {
    check_index(device);
    runtime::set_current_stream(device, stream_of(s));
  });
  m.def("_stream_query", [](uintptr_t s) {
    lazy_init();
    cudaError_t err = cudaStreamQuery(stream_of(s));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err);
    return true;
  });
  m.def("_stream_synchronize", [](uintptr_t s) {
    lazy_init();
    py::gil_scoped_release unlocked;
    check(cudaStreamSynchronize(stream_of(s)));
  });
  m.def("_stream_wait_event", [](uintptr_t s, uintptr_t e) {
    lazy_init();
    check(cudaStreamWaitEvent(stream_of(s), event_of(e), 0));
  });

  // Events: created on their device with torch.cuda.Event's flags.
  m.def("_event_create", [](int device, bool enable_timing, bool blocking, bool interprocess) {
    check_index(device);
    runtime::DeviceGuard guard(device);
    unsigned flags = enable_timing ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking) flags |= cudaEventBlockingSync;
    if (interprocess) flags |= cudaEventInterprocess | cudaEventDisableTiming;
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, flags));
    return reinterpret_cast<uintptr_t>(e);
  });
  m.def("_event_destroy", [](uintptr_t e) {
    if (!runtime::in_bad_fork()) cudaEventDestroy(event_of(e));
  });
  m.def("_event_record", [](uintptr_t e, uintptr_t s) {
    lazy_init();
    check(cudaEventRecord(event_of(e), stream_of(s)));
  });
  m.def("_event_query", [](uintptr_t e) {
    lazy_init();
    cudaError_t err = cudaEventQuery(event_of(e));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err);
    return true;
  });
  m.def("_event_synchronize", [](uintptr_t e) {
    lazy_init();
    py::gil_scoped_release unlocked;
    check(cudaEventSynchronize(event_of(e)));
  });
  m.def("_event_elapsed_time", [](uintptr_t start, uintptr_t end) {
    lazy_init();
    float ms = 0;
    check(cudaEventElapsedTime(&ms, event_of(start), event_of(end)));
    return ms;
  });
}

}  // namespace flambeau::cuda::backend
