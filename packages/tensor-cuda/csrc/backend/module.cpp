// flambeau_cuda._C: importing it registers device type "cuda" with flambeau's
// core through the C ABI (the flb_backend table and the kernels). It touches no
// driver: CUDA initializes lazily, on the first use that needs a device.
#include <Python.h>
#include <flambeau/backend_abi.h>
#include <flambeau/backend_python.h>
#include <pybind11/pybind11.h>

#include "allocator/alloc_config.h"
#include "allocator/errors.h"
#include "backend/hooks.h"
#include "backend/kernels/kernels.h"
#include "backend/python_api.h"
#include "backend/state.h"
#include "runtime/lazy_init.h"

namespace py = pybind11;
using namespace flambeau::cuda;

namespace {

[[noreturn]] void import_error(const char* what) {
  throw py::import_error(std::string("flambeau-tensor-cuda: ") + what +
                         " failed: " + backend::g_core->last_error());
}

void register_with_core() {
  backend::g_core = flb_import_core_api("flambeau-tensor-cuda", FLAMBEAU_CUDA_VERSION);
  if (!backend::g_core) throw py::error_already_set();
  int32_t type = backend::g_core->register_backend(&backend::cuda_backend_table());
  if (type < 0) import_error("register_backend");
  backend::g_device_type = type;
  if (kernels::register_kernels(backend::g_core, type) != FLB_OK) import_error("register_kernel");
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "The CUDA backend of flambeau (registered on import).";
  register_with_core();
  m.attr("__version__") = FLAMBEAU_CUDA_VERSION;
  m.attr("ARCHITECTURES") = FLAMBEAU_CUDA_ARCHS;  // as CMAKE_CUDA_ARCHITECTURES: "90", "80-real;90"
  m.attr("ALLOC_CONF_ENV") = kAllocConfEnv;
  m.attr("BAD_FORK_MESSAGE") = runtime::kBadForkMessage;
  m.attr("NO_DRIVER_MESSAGE") = runtime::kNoDriverMessage;
  m.attr("NO_DEVICE_MESSAGE") = runtime::kNoDeviceMessage;
  // The allocator's exceptions as Python's: OutOfMemoryError is raised from
  // Python (flambeau_cuda) as flambeau.cuda.OutOfMemoryError; config errors are ValueError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  backend::bind_python_api(m);
  backend::bind_selftests(m);
  backend::bind_ipc_sharing(m);
}
