// Sharing CUDA tensors between processes (flambeau.multiprocessing): the sender
// exports its storage's block as a CUDA IPC handle; the receiver opens it and gets
// the memory back as a DLPack capsule, which flambeau.from_dlpack turns into a CUDA
// tensor whose death closes the mapping. As in PyTorch, the sender must keep its
// tensor alive while a receiver uses it.
#include <flambeau/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "backend/hooks.h"
#include "backend/python_api.h"
#include "backend/state.h"

namespace py = pybind11;

namespace flambeau::cuda::backend {

namespace {

using namespace flambeau::dlpack;  // the legacy, unversioned capsule every consumer reads

// An imported block: the bytes as a 1-D uint8 tensor, and what frees the mapping.
struct Imported {
  DLManagedTensor managed{};
  int64_t size = 0;
  void* ptr = nullptr;
  void* ctx = nullptr;
};

void release(DLManagedTensor* m) {
  auto* imported = static_cast<Imported*>(m->manager_ctx);
  cuda_backend_table().free(nullptr, imported->ptr, imported->ctx);
  delete imported;
}

void check(flb_status status, const char* what) {
  if (status != FLB_OK) throw std::runtime_error(std::string(what) + ": " + g_core->last_error());
}

// The IPC handle of the device block at ptr (a storage's base address).
py::bytes export_handle(uintptr_t ptr) {
  char handle[256];
  size_t size = sizeof handle;
  check(ipc_export(nullptr, reinterpret_cast<void*>(ptr), nullptr, handle, &size),
        "sharing a CUDA tensor");
  return py::bytes(handle, size);
}

// Opens a handle of another process: its first nbytes, as a DLPack capsule.
py::capsule open_handle(const std::string& handle, int device, int64_t nbytes) {
  auto* imported = new Imported();
  flb_status s =
      ipc_import(nullptr, device, handle.data(), handle.size(), &imported->ptr, &imported->ctx);
  if (s != FLB_OK) {
    delete imported;
    check(s, "receiving a CUDA tensor");
  }
  imported->size = nbytes;
  DLManagedTensor& m = imported->managed;
  m.dl_tensor.data = imported->ptr;
  m.dl_tensor.device = {kDLCUDA, device};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = {kDLUInt, 8, 1};
  m.dl_tensor.shape = &imported->size;
  m.manager_ctx = imported;
  m.deleter = release;
  // A capsule nobody consumed frees the mapping itself.
  return py::capsule(&m, kLegacyName, [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, kLegacyUsed)) return;
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
    if (managed != nullptr) managed->deleter(managed);
    PyErr_Clear();
  });
}

}  // namespace

void bind_ipc_sharing(py::module_& m) {
  m.def("_ipc_export", &export_handle, py::arg("ptr"),
        "The CUDA IPC handle of the device block at ptr (bytes).");
  m.def("_ipc_open", &open_handle, py::arg("handle"), py::arg("device"), py::arg("nbytes"),
        "Opens another process's handle: its first nbytes as a DLPack capsule.");
}

}  // namespace flambeau::cuda::backend
