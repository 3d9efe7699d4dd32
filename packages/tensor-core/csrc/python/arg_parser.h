// Parses Python call arguments against an operator's schema, the way PyTorch's
// PythonArgParser does: positional and keyword binding, defaults, overloads,
// `zeros(2, 3)` varargs for a leading int[] (and a trailing Tensor[]) and TypeErrors that name the
// operator and the argument. Generated bindings (codegen/gen_ops.py) call it.
#pragma once
#include <pybind11/pybind11.h>

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/memory_format.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/common.h"
#include "python/tensor_holder.h"

namespace flambeau::python {

namespace py = pybind11;

enum class ParamType : int8_t {
  Tensor,
  TensorList,
  Scalar,
  ScalarList,
  Int,
  IntList,
  Float,
  Bool,
  String,
  Dtype,
  Device,
  Generator,
  MemoryFormat,
};

struct Param {
  std::string name;
  py::object py_name;  // interned, for fast keyword matching
  ParamType type;
  bool optional = false;  // None accepted
  bool kwonly = false;
  int list_size = 0;           // int[2]: one int stands for a list of that many
  bool none_elements = false;  // Tensor?[]: list items may be None
  bool has_default = false;
  py::object default_value;  // the default as a Python object
};

constexpr int kMaxParams = 16;

class Signature {
 public:
  explicit Signature(const std::string& schema);
  const std::string& name() const { return name_; }
  const std::vector<Param>& params() const { return params_; }
  std::string describe() const;  // "(Tensor input, Tensor other, *, Scalar alpha=1)"
  // Fills slots (borrowed references); on failure returns false and says why.
  // A leading int[] spelled as separate ints (zeros(2, 3)) is reported through
  // varargs_param / varargs_start (args[varargs_start:] are the list).
  // lenient: a second pass that also takes a 0-dim tensor for a float (arg_parser.cpp).
  bool bind(PyObject* self, PyObject* args, PyObject* kwargs, PyObject** slots, int* varargs_param,
            Py_ssize_t* varargs_start, std::string* why, bool lenient = false) const;

 private:
  int find_param(PyObject* key) const;  // by name or NumPy alias; -1 if none

  std::string name_;
  std::vector<Param> params_;
  int max_positional_ = 0;
};

class ParsedArgs;

// Bindings keep one in a function-local static. Its constructor only stores the
// schemas: they are parsed (which runs Python: literal defaults) at the first parse,
// under the interpreter lock. A static whose initializer ran Python could deadlock
// threads: one inside it yields the lock, another takes the lock and waits for the
// static's guard.
// One of PyTorch's deprecated call forms (its deprecated.yaml: `x.add_(2, y)` for
// `x.add_(y, alpha=2)`): a schema whose parameters are named as those of the overload
// `target` it stands for.
struct DeprecatedForm {
  int target;
  const char* schema;
};

class OverloadSet {
 public:
  OverloadSet(std::initializer_list<const char*> schemas,
              std::initializer_list<DeprecatedForm> deprecated = {})
      : schemas_(schemas), deprecated_(deprecated) {}
  // Binds against each overload in order; the first that fits wins. self is the
  // bound tensor for method calls (first parameter), or nullptr. When none fits and
  // defer_tensor_likes is set, an argument of another type that defines
  // __torch_function__ (PyTorch's tensor-likes: fx's Proxy) marks the result
  // tensor_like instead of raising; the caller then hands the call to the protocol.
  // A call that fits no overload but a deprecated form warns once (UserWarning, as
  // PyTorch) and is parsed as a call of that form's target overload.
  ParsedArgs parse(PyObject* self, PyObject* args, PyObject* kwargs,
                   bool defer_tensor_likes = false) const;

 private:
  const std::vector<Signature>& sigs() const;
  bool parse_deprecated(PyObject* self, PyObject* args, PyObject* kwargs, ParsedArgs& parsed) const;
  std::vector<const char*> schemas_;
  std::vector<DeprecatedForm> deprecated_;
  // The deprecated forms parsed, and whether each has warned: made at the first call
  // that needs them, published as sigs_ is (never freed).
  struct Deprecated {
    std::vector<Signature> sigs;
    std::unique_ptr<std::atomic<bool>[]> warned;
  };
  mutable std::atomic<Deprecated*> deprecated_sigs_{nullptr};
  // Published once parsed; two threads may both parse, one result is kept (never freed:
  // the sets live for the program, and ParsedArgs point into them).
  mutable std::atomic<const std::vector<Signature>*> sigs_{nullptr};
};

class ParsedArgs {
 public:
  int overload = 0;
  const Signature* sig = nullptr;
  bool tensor_like = false;  // nothing bound: see OverloadSet::parse
  std::array<PyObject*, kMaxParams> slots{};

  bool is_none(int i) const { return slots[i] == Py_None; }
  PyObject* raw(int i) const { return slots[i]; }
  Tensor tensor(int i) const;
  Tensor tensor_or_null(int i) const;
  std::vector<Tensor> tensors(int i) const;
  std::vector<Tensor> optional_tensors(int i) const;  // None items become null Tensors
  Scalar scalar(int i) const;
  std::optional<Scalar> scalar_opt(int i) const;
  std::vector<Scalar> scalars(int i) const;
  int64_t int64(int i) const;
  std::optional<int64_t> int64_opt(int i) const;
  DimVector intlist(int i) const;
  std::optional<DimVector> intlist_opt(int i) const;
  double f64(int i) const;
  std::optional<double> f64_opt(int i) const;
  bool boolean(int i) const;
  std::optional<bool> bool_opt(int i) const;
  std::string string(int i) const;
  std::optional<std::string> string_opt(int i) const;
  ScalarType dtype(int i) const;
  std::optional<ScalarType> dtype_opt(int i) const;
  std::optional<Device> device_opt(int i) const;
  Generator* generator(int i) const;
  // MemoryFormat or MemoryFormat?: None means preserve_format, as in PyTorch.
  MemoryFormat memory_format(int i) const;
  OutArg out(int i) const;
  // The varargs form of a leading int[] collected here (zeros(2, 3)).
  std::optional<DimVector> varargs_list;
  int varargs_index = -1;
  // The varargs form of a trailing Tensor[] (einsum('ij,jk', a, b)), owned here.
  py::object varargs_tuple;

 private:
  [[noreturn]] void type_error(int i, const char* expected) const;
};

// Conversions used by the parser and by hand-written bindings.
bool is_tensor(PyObject* o);
bool is_number(PyObject* o);
bool is_ndarray(PyObject* o);  // a NumPy array (false while NumPy is not imported)
Tensor tensor_from_py(PyObject* o, const char* op, const char* arg);  // Tensor or number
Scalar scalar_from_py(PyObject* o, const char* op, const char* arg);
ScalarType dtype_from_py(PyObject* o, const char* op, const char* arg);
Device device_from_py(PyObject* o, const char* op, const char* arg);
bool is_dtype(PyObject* o);
bool is_device(PyObject* o);
// The Python types of flambeau.Tensor / dtype / device / Generator, set at init.
void set_python_types(PyObject* tensor, PyObject* dtype, PyObject* device, PyObject* generator);
PyObject* dtype_object(ScalarType t);  // borrowed
void set_dtype_object(ScalarType t, PyObject* o);
// The flambeau.memory_format singletons (set at init by memory_format_bindings.cpp).
bool is_memory_format(PyObject* o);
MemoryFormat memory_format_from_py(PyObject* o, const char* op, const char* arg);
PyObject* memory_format_object(MemoryFormat f);  // borrowed
void set_memory_format_object(MemoryFormat f, PyObject* o);

}  // namespace flambeau::python
