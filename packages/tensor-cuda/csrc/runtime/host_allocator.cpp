#include "runtime/host_allocator.h"

#include <algorithm>

namespace flambeau::cuda::runtime {

namespace {
size_t round_up_pow2(size_t n) {
  size_t p = 512;  // the smallest block: keeps tiny pinned tensors from each taking a page
  while (p < n) p <<= 1;
  return p;
}
}  // namespace

cudaError_t HostAllocator::allocate(size_t nbytes, Block** block) {
  *block = nullptr;
  if (nbytes == 0) return cudaSuccess;
  const size_t size = round_up_pow2(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  Block* b = nullptr;
  if (auto it = free_.find(size); it != free_.end()) {
    b = it->second;
    free_.erase(it);
  } else {
    void* ptr = nullptr;
    cudaError_t err = cudaHostAlloc(&ptr, size, cudaHostAllocDefault);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return err;
    }
    b = new Block();
    b->ptr = ptr;
    b->size = size;
    blocks_[reinterpret_cast<uintptr_t>(ptr)] = b;
    stats_.reserved_bytes += static_cast<int64_t>(size);
  }
  b->in_use = true;
  stats_.allocated_bytes += static_cast<int64_t>(size);
  stats_.allocations += 1;
  *block = b;
  return cudaSuccess;
}

void HostAllocator::free(Block* b) {
  if (b == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  b->in_use = false;
  stats_.allocated_bytes -= static_cast<int64_t>(b->size);
  stats_.allocations -= 1;
  for (cudaStream_t s : b->streams) {
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(e, s) != cudaSuccess) {
      // Without an event, wait for the stream: the block must not be reused early.
      (void)cudaGetLastError();
      if (e) cudaEventDestroy(e);
      cudaStreamSynchronize(s);
      continue;
    }
    b->events.push_back(e);
  }
  b->streams.clear();
  if (b->events.empty())
    free_.emplace(b->size, b);
  else
    pending_.push_back(b);
}

void HostAllocator::process_events() {
  auto done = [this](Block* b) {
    while (!b->events.empty()) {
      cudaError_t err = cudaEventQuery(b->events.back());
      if (err == cudaErrorNotReady) return false;
      (void)cudaGetLastError();
      cudaEventDestroy(b->events.back());
      b->events.pop_back();
    }
    free_.emplace(b->size, b);
    return true;
  };
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), done), pending_.end());
}

HostAllocator::Block* HostAllocator::find_live(const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return nullptr;
  --it;
  Block* b = it->second;
  return b->in_use && p < it->first + b->size ? b : nullptr;
}

bool HostAllocator::record_stream(const void* ptr, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* b = find_live(ptr);
  if (!b) return false;
  if (std::find(b->streams.begin(), b->streams.end(), stream) == b->streams.end())
    b->streams.push_back(stream);
  return true;
}

bool HostAllocator::is_pinned(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_live(ptr) != nullptr;
}

void HostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  for (auto& [size, b] : free_) {
    cudaFreeHost(b->ptr);
    blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
    stats_.reserved_bytes -= static_cast<int64_t>(size);
    delete b;
  }
  free_.clear();
}

HostAllocator::Stats HostAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

HostAllocator& host_allocator() {
  static auto* a = new HostAllocator();  // pinned storages may be freed at process exit
  return *a;
}

}  // namespace flambeau::cuda::runtime
