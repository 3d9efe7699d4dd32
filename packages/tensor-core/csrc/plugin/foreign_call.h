// Calling a kernel a backend plugin registered through the C ABI: the core's
// C++ kernel arguments, in order, become one flb_kernel_call (tensors, scalars,
// integers and argument structs, each kind in its own array; the generated
// flambeau/backend_kernels.h says which go where for every kernel). KernelRef
// (dispatch/dispatcher.h) builds it only when a device has no native kernel.
#pragma once
#include <flambeau/backend_abi.h>

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "generated/kernel_signatures.h"

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
  void add(const Tensor& t) { tensors_.push_back(t); }  // undefined: an absent tensor
  void add(const Tensor* t) { tensors_.push_back(t ? *t : Tensor()); }
  void add(Span<Tensor> ts) {
    for (const Tensor& t : ts) tensors_.push_back(t);
  }
  void add(const Scalar& s);
  void add(Span<Scalar> ss) {
    for (const Scalar& s : ss) add(s);
  }
  void add(IntList v) { ints_.insert(ints_.end(), v.begin(), v.end()); }
  void add(Generator& g) { generator_ = &g; }
  void add(double v) { add(Scalar(v)); }
  template <class T>
  void add(T v) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                  "a kernel argument type without a C form: declare it in kernels/table.yaml");
    ints_.push_back(static_cast<int64_t>(v));
  }
  // Argument structs of the kernel table, in their C form (generated/kernel_abi.cpp).
#include "generated/foreign_call_structs.inc"

  // Adds a tensor field of an argument struct; returns its position.
  int32_t add_tensor_at(const Tensor& t) {
    tensors_.push_back(t);
    return static_cast<int32_t>(tensors_.size() - 1);
  }
  void set_int_result(int64_t* result) { int_result_ = result; }

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<flb_scalar>& scalars() const { return scalars_; }
  const std::vector<int64_t>& ints() const { return ints_; }
  const std::vector<const void*>& structs() const { return structs_; }
  Generator* generator() const { return generator_; }
  int64_t* int_result() const { return int_result_; }

 private:
  // Storage for the C structs, alive for the call (zero-initialized).
  template <class C>
  C& hold() {
    auto p = std::make_shared<C>();
    held_.push_back(p);
    return *p;
  }

  std::vector<Tensor> tensors_;
  std::vector<flb_scalar> scalars_;
  std::vector<int64_t> ints_;
  std::vector<const void*> structs_;
  std::vector<std::shared_ptr<void>> held_;
  Generator* generator_ = nullptr;
  int64_t* int_result_ = nullptr;
};

// Whether `name` is a kernel of the kernel table, and whether a plugin can
// provide it through the C ABI (generated/kernel_abi.cpp).
enum class KernelForm { kUnknown, kC, kHostOnly };
KernelForm kernel_form(const char* name);

// t on `device` (the host: Device{}): t itself when it is there, else a copy. For
// the kernels that run on the host for a plugin's device (see KernelRef).
Tensor copy_to(const Tensor& t, Device device);
template <class T>
decltype(auto) on_host(const T& arg) {
  if constexpr (std::is_same_v<T, Tensor>)
    return copy_to(arg, Device{});
  else
    return (arg);
}
inline Tensor result_to_device(const Tensor& t, Device device) { return copy_to(t, device); }
inline std::tuple<Tensor, Tensor, Tensor> result_to_device(
    const std::tuple<Tensor, Tensor, Tensor>& t, Device device) {
  return {copy_to(std::get<0>(t), device), copy_to(std::get<1>(t), device),
          copy_to(std::get<2>(t), device)};
}

// Picks the kernel for the first tensor's dtype and runs it; a NotImplementedError
// naming the operator, device and dtype when the plugin has none.
void call_foreign_kernel(const std::string& op, const ForeignKernels& kernels, Device device,
                         const ForeignCall& call);

}  // namespace flambeau
