// Whether the copy under way was asked for with non_blocking=True (Tensor.to,
// Tensor.copy_, Tensor.cuda): a backend plugin may then order a copy between
// pinned host memory and its device on the current stream without waiting for
// it, as PyTorch does. Copies on the CPU ignore it.
#pragma once

namespace flambeau {

bool non_blocking_copy();

// Sets the flag for the copies made while it lives (on this thread).
class NonBlockingCopy {
 public:
  explicit NonBlockingCopy(bool requested);
  ~NonBlockingCopy();
  NonBlockingCopy(const NonBlockingCopy&) = delete;
  NonBlockingCopy& operator=(const NonBlockingCopy&) = delete;

 private:
  bool saved_;
};

}  // namespace flambeau
