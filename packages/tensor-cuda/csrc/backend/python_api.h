// The functions flambeau_cuda's Python code builds torch.cuda's names on
// (flambeau_cuda._C._*): probing and lazy initialization, devices and their
// properties, the allocator's statistics and snapshot, streams and events.
#pragma once
#include <pybind11/pybind11.h>

namespace flambeau::cuda::backend {

void bind_python_api(pybind11::module_& m);
// Checks of the hooks for tests/gpu (selftest_api.cpp).
void bind_selftests(pybind11::module_& m);
// Sharing tensors between processes through CUDA IPC handles (ipc_sharing.cpp).
void bind_ipc_sharing(pybind11::module_& m);

}  // namespace flambeau::cuda::backend
