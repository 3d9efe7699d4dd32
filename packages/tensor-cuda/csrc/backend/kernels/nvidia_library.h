// Opening one of NVIDIA's CUDA 13 libraries (cuSOLVER, cuFFT) at its first use,
// as cublas_handles.cpp opens cuBLAS: the wheel's path (from Python) first, then
// the soname (the extension's RPATH, the loader's search). Never at import: the
// plugin imports without a GPU, a driver or these wheels.
#pragma once
#include <dlfcn.h>

#include <string>

namespace flambeau::cuda::kernels {

// The library's handle, or nullptr with *error saying what was tried and how to
// install it (`wheel`: the pip package that ships it).
inline void* open_nvidia_library(const std::string& wheel_path, const char* soname,
                                 const char* wheel, std::string* error) {
  void* lib = nullptr;
  std::string tried;
  if (!wheel_path.empty()) {
    lib = dlopen(wheel_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) tried = std::string(dlerror()) + "; ";
  }
  if (lib == nullptr) lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr)
    *error = std::string(soname) + " could not be loaded: " + tried + dlerror() +
             ". Install it with: pip install " + wheel;
  return lib;
}

// Resolves `name` into *out; false when the library lacks it.
template <class F>
bool fetch_symbol(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

}  // namespace flambeau::cuda::kernels
