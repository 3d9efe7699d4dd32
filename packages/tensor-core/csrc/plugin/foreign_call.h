// Calling a kernel a backend plugin registered through the C ABI: the core's
// C++ kernel arguments, in order, become one flb_kernel_call (tensors, scalars
// and integers, each kind in its own array). kernel_for (dispatch/dispatcher.h)
// builds it only when a device has no native kernel for the operator.
#pragma once
#include <flambeau/backend_abi.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace flambeau {

// A plugin's kernels for one operator on one device type, by dtype.
struct ForeignKernels {
  struct Entry {
    flb_kernel_fn fn = nullptr;
    void* ctx = nullptr;
  };
  Entry by_dtype[kNumScalarTypes];
  Entry any;  // FLB_ANY_DTYPE
};

class ForeignCall {
 public:
  void add(const Tensor& t) { tensors_.push_back(t); }
  void add(Span<Tensor> ts) {
    for (const Tensor& t : ts) tensors_.push_back(t);
  }
  void add(const Scalar& s);
  void add(Span<Scalar> ss) {
    for (const Scalar& s : ss) add(s);
  }
  void add(IntList v) { ints_.insert(ints_.end(), v.begin(), v.end()); }
  void add(Generator& g) { generator_ = &g; }
  template <class T>
  void add(const T& v) {
    if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T> || std::is_enum_v<T>) {
      ints_.push_back(static_cast<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      add(Scalar(static_cast<double>(v)));
    } else {
      unsupported_ = true;  // an argument type the C ABI does not carry
    }
  }

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<flb_scalar>& scalars() const { return scalars_; }
  const std::vector<int64_t>& ints() const { return ints_; }
  Generator* generator() const { return generator_; }
  bool unsupported() const { return unsupported_; }

 private:
  std::vector<Tensor> tensors_;
  std::vector<flb_scalar> scalars_;
  std::vector<int64_t> ints_;
  Generator* generator_ = nullptr;
  bool unsupported_ = false;
};

// Picks the kernel for the first tensor's dtype and runs it; a NotImplementedError
// naming the operator, device and dtype when the plugin has none.
void call_foreign_kernel(const std::string& op, const ForeignKernels& kernels, Device device,
                         const ForeignCall& call);

}  // namespace flambeau
