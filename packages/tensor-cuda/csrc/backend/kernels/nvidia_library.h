// NVIDIA's CUDA 13 libraries (cuBLAS, cuSOLVER, cuFFT), opened at their first use:
// the wheel's path (from Python) first, then the soname (the extension's RPATH, the
// loader's search). Never at import: the plugin imports without a GPU, a driver or
// these wheels. cuBLAS and cuSOLVER then keep one handle per (device, stream): a
// handle is bound to one stream and is not thread-safe, so each is leased to one
// enqueuer at a time; cuFFT keeps plans by shape instead (cufft_plans.cpp).
#pragma once
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace flambeau::cuda::kernels {

// Resolves `name` into *out; false when the library lacks it.
template <class F>
bool fetch_symbol(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

// One library and its entry points: Api is a struct of function pointers that
// fetch(lib, &api) fills (false when one is missing).
template <class Api>
class LazyLibrary {
 public:
  using Fetch = bool (*)(void* lib, Api* api);
  // soname: "libcublas.so.13"; wheel: the pip package that ships it.
  LazyLibrary(const char* soname, const char* wheel, Fetch fetch)
      : soname_(soname), wheel_(wheel), fetch_(fetch) {}

  void set_path(const std::string& path) {
    std::lock_guard<std::mutex> guard(mutex_);
    path_ = path;
  }
  // Opens the library (no device needed): "" when every entry point is there, else why
  // not. For the tests and diagnostics.
  std::string load() {
    std::lock_guard<std::mutex> guard(mutex_);
    return load_locked() != nullptr ? std::string() : error_;
  }
  // With mutex() held: the entry points, or nullptr with error() saying why. The
  // library is opened once; a failure is remembered.
  const Api* load_locked() {
    if (tried_) return error_.empty() ? &api_ : nullptr;
    tried_ = true;
    void* lib = nullptr;
    std::string tried;
    if (!path_.empty()) {
      lib = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) tried = std::string(dlerror()) + "; ";
    }
    if (lib == nullptr) lib = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error_ = std::string(soname_) + " could not be loaded: " + tried + dlerror() +
               ". Install it with: pip install " + wheel_;
      return nullptr;
    }
    if (!fetch_(lib, &api_)) {
      error_ = std::string(soname_) + " lacks a function flambeau needs: " + dlerror();
      return nullptr;
    }
    return &api_;
  }
  std::mutex& mutex() { return mutex_; }
  const std::string& error() const { return error_; }

 private:
  const char* soname_;
  const char* wheel_;
  Fetch fetch_;
  std::mutex mutex_;  // guards everything below
  std::string path_, error_;
  bool tried_ = false;
  Api api_{};
};

// A library handle bound to (device, stream), locked for the caller while it enqueues.
template <class Api, class Handle>
struct HandleLease {
  const Api* api = nullptr;
  Handle handle{};
  std::unique_lock<std::mutex> lock;
};

// One handle per (device, stream), made by create(api, device, stream, &handle) ("" or
// why it failed) the first time that pair asks. Never destroyed: handles (and any
// workspace create gave them) live until the process exits, as the streams they serve.
template <class Api, class Handle>
class StreamHandles {
 public:
  using Create = std::string (*)(const Api& api, int device, cudaStream_t stream, Handle* handle);
  StreamHandles(LazyLibrary<Api>* library, Create create) : library_(library), create_(create) {}

  // The handle of (device, stream), or false with *error saying why. The device must
  // be current.
  bool lease(int device, cudaStream_t stream, HandleLease<Api, Handle>* out, std::string* error) {
    std::unique_lock<std::mutex> guard(library_->mutex());
    const Api* api = library_->load_locked();
    if (api == nullptr) {
      *error = library_->error();
      return false;
    }
    auto& slot = (*slots_)[{device, stream}];
    if (!slot) {
      auto s = std::make_unique<Slot>();
      if (std::string why = create_(*api, device, stream, &s->handle); !why.empty()) {
        *error = std::move(why);
        return false;
      }
      slot = std::move(s);
    }
    Slot& s = *slot;
    guard.unlock();
    out->api = api;
    out->handle = s.handle;
    out->lock = std::unique_lock<std::mutex>(s.mutex);
    return true;
  }

 private:
  struct Slot {
    Handle handle{};
    std::mutex mutex;  // one enqueuer at a time
  };
  using Slots = std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Slot>>;
  LazyLibrary<Api>* library_;
  Create create_;
  Slots* slots_ = new Slots();  // leaked on purpose: see above
};

}  // namespace flambeau::cuda::kernels
