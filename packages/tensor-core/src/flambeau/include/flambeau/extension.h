// flambeau's C++ API for extension authors: one include, namespace flambeau.
//
//   #include <flambeau/extension.h>
//
//   flambeau::Tensor scale(const flambeau::Tensor& x, double alpha) {
//     FLAMBEAU_CHECK(x.dtype() == flambeau::kFloat32, "scale: expected float32, got ",
//                    flambeau::dtype_name(x.dtype()));
//     flambeau::Tensor xc = x.contiguous();
//     flambeau::Tensor out = flambeau::empty_like(xc);
//     const float* in = xc.data_ptr<float>();
//     float* o = out.data_ptr<float>();
//     for (int64_t i = 0; i < xc.numel(); ++i) o[i] = static_cast<float>(alpha * in[i]);
//     return out;
//   }
//   PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale); }
//
// Why header-only over the Python objects: the core's C++ symbols are not exported
// for linking and its C++ ABI is not stable (docs/design/extensions.rst). A
// flambeau::Tensor therefore holds a reference to a Python flambeau.Tensor; its
// accessors read that object, and flambeau::empty/zeros/ops::* call the flambeau
// module's Python functions. Every call needs the GIL (pybind11 holds it while a
// bound function runs). Accessors cost a Python attribute lookup each (about a
// microsecond): read sizes and pointers once, then loop in plain C++.
//
// Versioning (docs/versioning.rst): MAJOR changes when code written against this
// header may stop compiling or behave differently; MINOR when something is added.
#pragma once

#define FLAMBEAU_EXTENSION_VERSION_MAJOR 1
#define FLAMBEAU_EXTENSION_VERSION_MINOR 0

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <complex>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// Each extension module carries its own copy of these inline classes; hidden
// visibility keeps copies in different modules apart (and matches pybind11's).
#if defined(__GNUC__) && !defined(_WIN32)
#define FLAMBEAU_EXT_HIDDEN __attribute__((visibility("hidden")))
#else
#define FLAMBEAU_EXT_HIDDEN
#endif

namespace flambeau FLAMBEAU_EXT_HIDDEN {

// ---------------------------------------------------------------------------
// Errors: FLAMBEAU_CHECK(cond, parts...) throws flambeau::Error, which pybind11
// turns into a Python RuntimeError carrying the message. The _VALUE, _TYPE and
// _INDEX variants raise ValueError, TypeError and IndexError.

// A RuntimeError for Python (pybind11 translates std::runtime_error to it).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// The message of a failed check: the user's parts, or PyTorch's wording when none.
template <class... Parts>
std::string check_message(const char* condition, const Parts&... parts) {
  if constexpr (sizeof...(Parts) == 0) {
    return concat("Expected ", condition, " to be true, but got false.");
  } else {
    return concat(parts...);
  }
}

}  // namespace detail

#define FLAMBEAU_CHECK_AS(exception, cond, ...)                                 \
  do {                                                                          \
    if (!(cond)) {                                                              \
      throw exception(::flambeau::detail::check_message(#cond, ##__VA_ARGS__)); \
    }                                                                           \
  } while (false)

#define FLAMBEAU_CHECK(cond, ...) FLAMBEAU_CHECK_AS(::flambeau::Error, cond, ##__VA_ARGS__)
#define FLAMBEAU_CHECK_VALUE(cond, ...) \
  FLAMBEAU_CHECK_AS(::pybind11::value_error, cond, ##__VA_ARGS__)
#define FLAMBEAU_CHECK_TYPE(cond, ...) \
  FLAMBEAU_CHECK_AS(::pybind11::type_error, cond, ##__VA_ARGS__)
#define FLAMBEAU_CHECK_INDEX(cond, ...) \
  FLAMBEAU_CHECK_AS(::pybind11::index_error, cond, ##__VA_ARGS__)

// ---------------------------------------------------------------------------
// Element types: the names of flambeau's dtypes (flambeau.float32 -> Float32).

enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
};

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kUInt8 = ScalarType::UInt8;
constexpr ScalarType kInt8 = ScalarType::Int8;
constexpr ScalarType kInt16 = ScalarType::Int16;
constexpr ScalarType kInt32 = ScalarType::Int32;
constexpr ScalarType kInt64 = ScalarType::Int64;
constexpr ScalarType kFloat16 = ScalarType::Float16;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat32 = ScalarType::Float32;
constexpr ScalarType kFloat64 = ScalarType::Float64;
constexpr ScalarType kComplex64 = ScalarType::Complex64;
constexpr ScalarType kComplex128 = ScalarType::Complex128;

// flambeau's dtype names, in ScalarType order.
inline const char* dtype_name(ScalarType t) {
  static const char* const names[] = {"bool",    "uint8",   "int8",      "int16",
                                      "int32",   "int64",   "float16",   "bfloat16",
                                      "float32", "float64", "complex64", "complex128"};
  return names[static_cast<int>(t)];
}

// 16-bit floating types have no C++ arithmetic type: data_ptr<Half>() and
// data_ptr<BFloat16>() give their raw bits.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// The ScalarType of a C++ element type, for data_ptr<T>()'s check.
template <class T>
struct scalar_type_of;
#define FLAMBEAU_SCALAR_TYPE_OF(T, ST)                  \
  template <>                                           \
  struct scalar_type_of<T> {                            \
    static constexpr ScalarType value = ScalarType::ST; \
  };
FLAMBEAU_SCALAR_TYPE_OF(bool, Bool)
FLAMBEAU_SCALAR_TYPE_OF(uint8_t, UInt8)
FLAMBEAU_SCALAR_TYPE_OF(int8_t, Int8)
FLAMBEAU_SCALAR_TYPE_OF(int16_t, Int16)
FLAMBEAU_SCALAR_TYPE_OF(int32_t, Int32)
FLAMBEAU_SCALAR_TYPE_OF(int64_t, Int64)
FLAMBEAU_SCALAR_TYPE_OF(Half, Float16)
FLAMBEAU_SCALAR_TYPE_OF(BFloat16, BFloat16)
FLAMBEAU_SCALAR_TYPE_OF(float, Float32)
FLAMBEAU_SCALAR_TYPE_OF(double, Float64)
FLAMBEAU_SCALAR_TYPE_OF(std::complex<float>, Complex64)
FLAMBEAU_SCALAR_TYPE_OF(std::complex<double>, Complex128)
#undef FLAMBEAU_SCALAR_TYPE_OF

// A device: its type ("cpu", "cuda", a plugin's) and index (-1 when none was given).
struct Device {
  std::string type;
  int64_t index = -1;
  bool is_cpu() const { return type == "cpu"; }
  std::string str() const { return index < 0 ? type : type + ":" + std::to_string(index); }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

namespace detail {

namespace py = pybind11;

// The flambeau module, imported once and kept for the life of the process (leaked on
// purpose: a static py::object would be released after the interpreter is gone).
inline py::handle flambeau_module() {
  static PyObject* module = py::module_::import("flambeau").release().ptr();
  return module;
}

inline py::handle tensor_type() {
  static PyObject* type = py::object(flambeau_module().attr("Tensor")).release().ptr();
  return type;
}

inline bool is_tensor(py::handle obj) {
  return obj && PyObject_IsInstance(obj.ptr(), tensor_type().ptr()) == 1;
}

inline py::object dtype_object(ScalarType t) { return flambeau_module().attr(dtype_name(t)); }

inline ScalarType scalar_type_from(py::handle dtype) {
  // flambeau.float32 prints as "flambeau.float32"; the part after the dot is its name.
  std::string name = py::str(dtype);
  name = name.substr(name.rfind('.') + 1);
  for (int i = 0; i <= static_cast<int>(ScalarType::Complex128); ++i) {
    if (name == dtype_name(static_cast<ScalarType>(i))) return static_cast<ScalarType>(i);
  }
  throw py::type_error("flambeau extension: unknown dtype " + std::string(py::str(dtype)));
}

inline std::vector<int64_t> int_list(py::handle seq) {
  std::vector<int64_t> out;
  for (py::handle v : seq) out.push_back(v.cast<int64_t>());
  return out;
}

// Wraps a negative dimension like Python indexing does, with PyTorch's IndexError.
inline int64_t wrap_dim(int64_t d, int64_t ndim) {
  int64_t n = ndim == 0 ? 1 : ndim;
  if (d < -n || d >= n) {
    throw py::index_error(concat("Dimension out of range (expected to be in range of [", -n, ", ",
                                 n - 1, "], but got ", d, ")"));
  }
  return d < 0 ? d + n : d;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Tensor: a reference to a Python flambeau.Tensor (copies share the tensor, as
// Python references do). A default-constructed Tensor is undefined and maps to None.

class Tensor {
 public:
  Tensor() = default;
  // Wraps a Python object; TypeError unless it is a flambeau.Tensor.
  explicit Tensor(pybind11::object obj) : obj_(std::move(obj)) {
    if (!detail::is_tensor(obj_)) {
      throw pybind11::type_error(
          detail::concat("expected a flambeau.Tensor, got ",
                         std::string(pybind11::str(pybind11::type::handle_of(obj_)))));
    }
  }

  bool defined() const { return static_cast<bool>(obj_); }
  // The Python object, to call anything the C++ API does not cover.
  const pybind11::object& object() const { return obj_; }
  pybind11::object attr(const char* name) const { return checked().attr(name); }

  int64_t dim() const { return attr("dim")().cast<int64_t>(); }
  int64_t numel() const { return attr("numel")().cast<int64_t>(); }
  std::vector<int64_t> sizes() const { return detail::int_list(attr("shape")); }
  std::vector<int64_t> strides() const { return detail::int_list(attr("stride")()); }
  int64_t size(int64_t d) const { return sizes()[detail::wrap_dim(d, dim())]; }
  int64_t stride(int64_t d) const { return strides()[detail::wrap_dim(d, dim())]; }
  int64_t storage_offset() const { return attr("storage_offset")().cast<int64_t>(); }
  ScalarType dtype() const { return detail::scalar_type_from(attr("dtype")); }
  ScalarType scalar_type() const { return dtype(); }
  size_t element_size() const { return attr("element_size")().cast<size_t>(); }
  Device device() const {
    pybind11::object d = attr("device");
    pybind11::object index = d.attr("index");
    return Device{d.attr("type").cast<std::string>(), index.is_none() ? -1 : index.cast<int64_t>()};
  }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_contiguous() const { return attr("is_contiguous")().cast<bool>(); }
  bool requires_grad() const { return attr("requires_grad").cast<bool>(); }

  // The same tensor when already contiguous, else a contiguous copy.
  Tensor contiguous() const { return Tensor(attr("contiguous")()); }
  Tensor to(ScalarType t) const { return Tensor(attr("to")(detail::dtype_object(t))); }
  Tensor detach() const { return Tensor(attr("detach")()); }
  Tensor clone() const { return Tensor(attr("clone")()); }

  // The address of the first element (storage offset included).
  void* data_ptr() const { return reinterpret_cast<void*>(attr("data_ptr")().cast<uintptr_t>()); }
  // Typed address; Error unless T is the tensor's element type.
  template <class T>
  T* data_ptr() const {
    ScalarType have = dtype();
    FLAMBEAU_CHECK(have == scalar_type_of<T>::value, "expected scalar type ",
                   dtype_name(scalar_type_of<T>::value), " but found ", dtype_name(have));
    return static_cast<T*>(data_ptr());
  }

 private:
  const pybind11::object& checked() const {
    FLAMBEAU_CHECK(defined(), "flambeau::Tensor: the tensor is undefined");
    return obj_;
  }

  pybind11::object obj_;
};

// ---------------------------------------------------------------------------
// Calling flambeau's Python functions: ops::call("add", a, b, "alpha"_a = 2) is
// flambeau.add(a, b, alpha=2). Arguments convert as pybind11 converts them
// (Tensor, numbers, std::vector, ScalarType, pybind11::arg keywords).

namespace ops {

// flambeau.<name>(args...) as a Python object (for functions returning tuples, numbers).
template <class... Args>
pybind11::object call_object(const char* name, Args&&... args) {
  return detail::flambeau_module().attr(name)(std::forward<Args>(args)...);
}

// flambeau.<name>(args...), which must return a tensor.
template <class... Args>
Tensor call(const char* name, Args&&... args) {
  return Tensor(call_object(name, std::forward<Args>(args)...));
}

inline Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0) {
  using namespace pybind11::literals;
  return alpha == 1.0 ? call("add", a, b) : call("add", a, b, "alpha"_a = alpha);
}
inline Tensor sub(const Tensor& a, const Tensor& b) { return call("sub", a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return call("mul", a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return call("div", a, b); }
inline Tensor matmul(const Tensor& a, const Tensor& b) { return call("matmul", a, b); }
inline Tensor neg(const Tensor& a) { return call("neg", a); }
inline Tensor exp(const Tensor& a) { return call("exp", a); }
inline Tensor tanh(const Tensor& a) { return call("tanh", a); }
inline Tensor sigmoid(const Tensor& a) { return call("sigmoid", a); }
inline Tensor relu(const Tensor& a) { return call("relu", a); }
inline Tensor sum(const Tensor& a) { return call("sum", a); }

}  // namespace ops

// ---------------------------------------------------------------------------
// Creating outputs (on "cpu" unless a device is named).

inline Tensor empty(const std::vector<int64_t>& sizes, ScalarType dtype = kFloat32,
                    const std::string& device = "cpu") {
  using namespace pybind11::literals;
  return ops::call("empty", pybind11::tuple(pybind11::cast(sizes)),
                   "dtype"_a = detail::dtype_object(dtype), "device"_a = device);
}
inline Tensor zeros(const std::vector<int64_t>& sizes, ScalarType dtype = kFloat32,
                    const std::string& device = "cpu") {
  using namespace pybind11::literals;
  return ops::call("zeros", pybind11::tuple(pybind11::cast(sizes)),
                   "dtype"_a = detail::dtype_object(dtype), "device"_a = device);
}
inline Tensor ones(const std::vector<int64_t>& sizes, ScalarType dtype = kFloat32,
                   const std::string& device = "cpu") {
  using namespace pybind11::literals;
  return ops::call("ones", pybind11::tuple(pybind11::cast(sizes)),
                   "dtype"_a = detail::dtype_object(dtype), "device"_a = device);
}
// Same sizes, dtype and device as t; contiguous.
inline Tensor empty_like(const Tensor& t) { return ops::call("empty_like", t); }
inline Tensor zeros_like(const Tensor& t) { return ops::call("zeros_like", t); }

}  // namespace flambeau FLAMBEAU_EXT_HIDDEN

// ---------------------------------------------------------------------------
// pybind11 conversions: functions taking and returning flambeau::Tensor (or
// ScalarType) bind with m.def("f", &f) and no wrapper code. Anything but a
// flambeau.Tensor is refused with pybind11's TypeError ("incompatible function
// arguments"); an undefined Tensor returns None.

namespace pybind11::detail {

template <>
struct type_caster<flambeau::Tensor> {
  PYBIND11_TYPE_CASTER(flambeau::Tensor, const_name("flambeau.Tensor"));

  bool load(handle src, bool /*convert*/) {
    if (!flambeau::detail::is_tensor(src)) return false;
    value = flambeau::Tensor(reinterpret_borrow<object>(src));
    return true;
  }
  static handle cast(const flambeau::Tensor& t, return_value_policy, handle) {
    return t.defined() ? t.object().inc_ref() : none().release();
  }
};

template <>
struct type_caster<flambeau::ScalarType> {
  PYBIND11_TYPE_CASTER(flambeau::ScalarType, const_name("flambeau.dtype"));

  bool load(handle src, bool /*convert*/) {
    if (!src || !isinstance(src, flambeau::detail::flambeau_module().attr("dtype"))) return false;
    value = flambeau::detail::scalar_type_from(src);
    return true;
  }
  static handle cast(flambeau::ScalarType t, return_value_policy, handle) {
    return flambeau::detail::dtype_object(t).release();
  }
};

}  // namespace pybind11::detail
