// Checks of the flb_backend hooks the core does not reach from Python yet (pinned
// host memory, non_blocking copies, IPC), run by tests/gpu through the table itself.
#include <pybind11/pybind11.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/hooks.h"
#include "backend/python_api.h"
#include "backend/state.h"

namespace py = pybind11;

namespace flambeau::cuda::backend {

namespace {

void ok(flb_status s, const char* what) {
  if (s != FLB_OK) throw std::runtime_error(std::string(what) + " failed: " + g_core->last_error());
}

// Pattern bytes -> pinned block -> device (non_blocking) -> second pinned block
// (non_blocking) -> synchronize; returns whether the bytes came back exactly.
bool pinned_round_trip(size_t nbytes, int device) {
  const flb_backend& b = cuda_backend_table();
  void *src = nullptr, *src_ctx = nullptr, *dst = nullptr, *dst_ctx = nullptr;
  void *dev = nullptr, *dev_ctx = nullptr;
  ok(b.host_allocate(nullptr, nbytes, &src, &src_ctx), "host_allocate");
  ok(b.host_allocate(nullptr, nbytes, &dst, &dst_ctx), "host_allocate");
  ok(b.allocate(nullptr, device, nbytes, &dev, &dev_ctx), "allocate");
  for (size_t i = 0; i < nbytes; ++i) static_cast<unsigned char*>(src)[i] = (i * 131 + 7) & 0xff;
  std::memset(dst, 0, nbytes);
  flb_stream s = b.current_stream(nullptr, device);
  ok(b.copy_from_host(nullptr, dev, src, nbytes, device, s, 1), "copy_from_host");
  ok(b.copy_to_host(nullptr, dst, dev, nbytes, device, s, 1), "copy_to_host");
  ok(b.synchronize(nullptr, device), "synchronize");
  bool same = std::memcmp(src, dst, nbytes) == 0;
  b.free(nullptr, dev, dev_ctx);
  b.host_free(nullptr, src, src_ctx);
  b.host_free(nullptr, dst, dst_ctx);
  return same;
}

// A device block filled with `data`, kept alive for the process, and its IPC handle.
py::bytes export_block(const std::string& data, int device) {
  const flb_backend& b = cuda_backend_table();
  void *dev = nullptr, *ctx = nullptr;
  ok(b.allocate(nullptr, device, data.size(), &dev, &ctx), "allocate");
  ok(b.copy_from_host(nullptr, dev, data.data(), data.size(), device,
                      b.current_stream(nullptr, device), 0),
     "copy_from_host");
  char handle[256];
  size_t size = sizeof handle;
  ok(b.ipc_export(nullptr, dev, ctx, handle, &size), "ipc_export");
  return py::bytes(handle, size);
}

// Opens a handle of another process and returns the first nbytes of its block.
py::bytes import_block(const std::string& handle, size_t nbytes, int device) {
  const flb_backend& b = cuda_backend_table();
  void *dev = nullptr, *ctx = nullptr;
  ok(b.ipc_import(nullptr, device, handle.data(), handle.size(), &dev, &ctx), "ipc_import");
  std::vector<char> out(nbytes);
  ok(b.copy_to_host(nullptr, out.data(), dev, nbytes, device, b.current_stream(nullptr, device), 0),
     "copy_to_host");
  b.free(nullptr, dev, ctx);
  return py::bytes(out.data(), out.size());
}

}  // namespace

void bind_selftests(py::module_& m) {
  m.def("_selftest_pinned_round_trip", &pinned_round_trip, py::arg("nbytes"), py::arg("device"));
  m.def("_selftest_ipc_export", &export_block, py::arg("data"), py::arg("device"));
  m.def("_selftest_ipc_import", &import_block, py::arg("handle"), py::arg("nbytes"),
        py::arg("device"));
}

}  // namespace flambeau::cuda::backend
