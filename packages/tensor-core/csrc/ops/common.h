// Pieces every operator frontend uses: out=/in-place arguments, PyTorch's
// result_type, casting and expanding inputs.
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>

#include "core/memory_format.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatcher.h"

namespace flambeau {

// Where an operator writes: a fresh tensor (none), a caller's `out=` tensor
// (resized when its shape differs), or the `self` of an in-place `op_` call
// (shape must match exactly).
struct OutArg {
  Tensor tensor;
  bool inplace = false;
  // out= shares memory with an input: it is never resized (that would replace
  // the input's memory under the kernel), its shape must match, as in PyTorch.
  bool aliases_input = false;
  static OutArg none() { return {}; }
  static OutArg into(Tensor t, bool aliases_input = false) {
    return {std::move(t), false, aliases_input};
  }
  static OutArg self(Tensor t) { return {std::move(t), true, false}; }
  bool given() const { return static_cast<bool>(tensor); }
};

// PyTorch's result_type: tensors with dims outrank 0-dim tensors, which outrank
// Python numbers; a lower tier only matters when its category is higher.
ScalarType result_type(std::initializer_list<const Tensor*> tensors);
ScalarType result_type(Span<Tensor> tensors);

// `t` with dtype `dtype` (t itself when it already has it).
Tensor to_dtype(const Tensor& t, ScalarType dtype);
// A stride-0 view of `t` broadcast to `shape`.
Tensor expand_to(const Tensor& t, IntList shape, const char* op);
// Makes `t` have `sizes`: reuses its storage when large enough, else allocates.
void resize_out(const Tensor& t, IntList sizes);

// PyTorch's refusal to write into a tensor whose elements share memory (a stride of 0
// over a dim of more than one element, as an expanded view has); op prefixes the
// message when given.
void check_no_internal_overlap(const Tensor& t, const char* op = nullptr);
// Checks an out=/in-place destination, resizing out= as needed. Returns the
// tensor the result goes to.
Tensor prepare_out(const OutArg& out, IntList shape, ScalarType result, Device device,
                   const char* op);
// PyTorch's out=: `result` written into the out= tensor (resized to its shape; the
// result's dtype must be castable to out's) and that tensor returned; `result` itself
// when no out= was given.
Tensor write_out(const OutArg& out, const Tensor& result, const char* op);
// The same for tensor i of a tuple out= (whose dtypes must match exactly, as PyTorch's
// multi-output operators require); `result` itself when out is empty.
Tensor write_out(const std::vector<Tensor>& out, size_t i, const Tensor& result, const char* op);
// Checks a tuple out= has `n` tensors (or none).
void check_out_tuple(const std::vector<Tensor>& out, size_t n, const char* op);
// Tensor from a Python number: a 0-dim wrapped number on the CPU.
Tensor scalar_tensor(const Scalar& s, ScalarType dtype);
// The device of an elementwise operator's inputs: 0-dim CPU tensors and wrapped numbers
// go with any device, as numbers do; the others must share one (a RuntimeError naming
// both devices otherwise). The CPU when every input is such a scalar.
Device operand_device(Span<Tensor> inputs, const char* name);
Tensor wrapped_scalar(const Scalar& s);
// Copies src into dst (broadcasting src, converting dtype); the one copy kernel.
void copy_into(const Tensor& dst, const Tensor& src);
// Raises, as PyTorch does, when `written` and `read` are dense and share some but not all
// of their memory: the result would depend on the order elements are visited in.
void check_no_partial_overlap(const Tensor& written, const Tensor& read, const char* op);
// Strides laying out t's dims in t's memory order when t covers its shape densely (a
// permutation of a row-major layout, size-1 dims anywhere); else nothing.
std::optional<DimVector> dense_layout_of(const Tensor& t);
// A row-major copy of t (clone() preserves layouts; internal callers wanting row-major
// memory use this).
Tensor contiguous_copy(const Tensor& t);

namespace ops {
// contiguous(t, contiguous_format): t itself when row-major, else contiguous_copy(t).
Tensor contiguous(const Tensor& self);
}  // namespace ops

// How an elementwise operator derives its types from the promoted input type.
enum class Promote : int8_t {
  Default,        // compute and return the promoted type (add, mul)
  IntToFloat,     // integers and bool compute in the default float type (div, exp)
  BoolOut,        // compute in the promoted type, return bool (eq, lt)
  ComplexToReal,  // return the real type of a complex input (abs)
};

constexpr size_t kMaxElementwiseInputs = 6;

struct ElementwiseSpec {
  const char* name;
  Promote promote = Promote::Default;
  uint32_t dtypes = kAllTypes;  // compute types the operator supports
};

// The shared frontend of elementwise operators: checks, type promotion,
// broadcasting, out=/in-place handling, then the registered kernel for the
// device. args are non-tensor operands forwarded to the kernel (alpha, ...).
Tensor elementwise(const KernelHandle<ElementwiseKernel>& op, const ElementwiseSpec& spec,
                   std::initializer_list<Tensor> inputs, std::initializer_list<Scalar> args,
                   const OutArg& out);

}  // namespace flambeau
