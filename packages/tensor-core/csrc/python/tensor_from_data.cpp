// flambeau.tensor() / as_tensor() from Python data (nested sequences, numbers,
// NumPy arrays, tensors, objects with __array__ or the buffer protocol), and
// Tensor.tolist() back. Nested lists are walked once in C++: the shape comes
// from the first element at each depth, every other element is checked
// against it, and the dtype is inferred as in PyTorch (bool < int64 < default
// float < default complex, promoting across elements).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "generated/ops_tensor.h"
#include "python/binding_support.h"
#include "python/registry.h"
#include "python/torch_function.h"

namespace flambeau::python {

namespace {
// NumPy is never imported just to check types: an object can only be a NumPy
// array or scalar if NumPy is already loaded.
bool numpy_loaded() { return PyDict_GetItemString(PyImport_GetModuleDict(), "numpy") != nullptr; }
}  // namespace

bool is_ndarray(PyObject* o) { return numpy_loaded() && py::isinstance<py::array>(o); }

Tensor tensor_from_numpy(const py::array& arr);  // numpy_bridge.cpp

namespace {

bool is_numpy_scalar(PyObject* o) {
  if (!numpy_loaded()) return false;
  static PyObject* generic =
      py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  return PyObject_IsInstance(o, generic) == 1;
}

bool is_sequence(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

bool has_array_interface(PyObject* o) {
  return PyObject_HasAttrString(o, "__array__") ||
         PyObject_HasAttrString(o, "__array_interface__") ||
         (PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyByteArray_Check(o));
}

py::array as_ndarray(PyObject* o) {
  return py::module_::import("numpy").attr("asarray")(py::handle(o));
}

// A NumPy array as a tensor sharing its memory (negative strides are copied first).
Tensor from_array(const py::array& arr) {
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    if (arr.strides(d) < 0)
      return tensor_from_numpy(py::module_::import("numpy").attr("ascontiguousarray")(arr));
  }
  return tensor_from_numpy(arr);
}

ScalarType number_dtype(PyObject* o) {
  if (PyFloat_CheckExact(o)) return default_dtype();
  if (PyBool_Check(o)) return ScalarType::Bool;
  if (PyLong_Check(o)) return ScalarType::Int64;
  if (PyFloat_Check(o)) return default_dtype();
  if (PyComplex_Check(o)) return default_complex_dtype();
  if (PyIndex_Check(o)) return ScalarType::Int64;
  return default_dtype();
}

const char* type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

// One pass over nested data: the shape, the leaves in row-major order, and
// tensor-valued leaves (tensors, arrays inside a list) with where they go.
struct Collected {
  DimVector shape;
  size_t seq_dims = 0;  // leading dims that come from Python sequences
  std::vector<PyObject*> numbers;
  std::vector<int64_t> number_pos;
  std::vector<std::pair<Tensor, int64_t>> blocks;  // (tensor, first flat index)
  std::vector<py::object> keep;                    // temporaries the leaves point into
};

Tensor leaf_tensor(PyObject* o, Collected& c) {
  if (is_tensor(o)) return py::handle(o).cast<Tensor>();
  py::array arr = as_ndarray(o);
  c.keep.push_back(arr);
  return from_array(arr);
}

bool is_tensor_like_leaf(PyObject* o) {
  return is_tensor(o) || is_ndarray(o) || is_numpy_scalar(o);
}

void infer_shape(PyObject* data, Collected& c) {
  PyObject* o = data;
  while (is_sequence(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    c.shape.push_back(n);
    ++c.seq_dims;
    if (n == 0) return;
    o = PySequence_Fast_ITEMS(o)[0];
  }
  if (is_tensor_like_leaf(o)) {
    Tensor t = leaf_tensor(o, c);
    for (int64_t s : t->sizes()) c.shape.push_back(s);
  }
}

void collect(PyObject* o, size_t dim, int64_t& flat, Collected& c) {
  if (dim < c.seq_dims) {
    int64_t want = c.shape[dim];
    if (!is_sequence(o)) {
      fail<ValueError>("expected sequence of length ", want, " at dim ", dim, " (got ",
                       type_name(o), ")");
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n != want)
      fail<ValueError>("expected sequence of length ", want, " at dim ", dim, " (got ", n, ")");
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) collect(items[i], dim + 1, flat, c);
    return;
  }
  if (is_sequence(o)) {
    fail<ValueError>("too many dimensions: expected a number at dim ", dim, " (got ", type_name(o),
                     ")");
  }
  const bool trailing = c.shape.size() > c.seq_dims;
  // Fast path for the common leaves: plain Python numbers.
  if (!trailing && (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) ||
                    PyComplex_CheckExact(o))) {
    c.numbers.push_back(o);
    c.number_pos.push_back(flat++);
    return;
  }
  if (is_tensor_like_leaf(o)) {
    Tensor t = leaf_tensor(o, c);
    IntList want(c.shape.data() + c.seq_dims, c.shape.size() - c.seq_dims);
    if (t->sizes() != want) {
      fail<ValueError>("expected an element of shape ", shape_str(want), " at dim ", dim,
                       " (got shape ", shape_str(t->sizes()), ")");
    }
    c.blocks.emplace_back(t, flat);
    flat += t->numel();
    return;
  }
  if (trailing) {
    fail<ValueError>("expected an element of shape ",
                     shape_str(IntList(c.shape.data() + c.seq_dims, c.shape.size() - c.seq_dims)),
                     " at dim ", dim, " (got ", type_name(o), ")");
  }
  if (!is_number(o) || PyUnicode_Check(o) || PyBytes_Check(o))
    fail<TypeError>("tensor(): invalid data type '", type_name(o), "'");
  c.numbers.push_back(o);
  c.number_pos.push_back(flat++);
}

template <class T>
T number_as(PyObject* o) {
  if (PyFloat_CheckExact(o)) return convert<T>(PyFloat_AS_DOUBLE(o));
  if (PyBool_Check(o)) return convert<T>(o == Py_True);
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if constexpr (std::is_same_v<T, uint64_t>) {  // uint64 holds what int64 cannot
      if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return u;
        PyErr_Clear();
      }
    }
    if (overflow) fail("Overflow when unpacking long: ", py::str(o).cast<std::string>());
    return convert<T>(static_cast<int64_t>(v));
  }
  return scalar_from_py(o, "tensor", "data").to<T>();
}

Tensor from_nested(PyObject* data, std::optional<ScalarType> dtype) {
  Collected c;
  infer_shape(data, c);
  int64_t flat = 0;
  collect(data, 0, flat, c);
  ScalarType dt = ScalarType::Undefined;
  if (dtype) {
    dt = *dtype;
  } else {
    ScalarType last = ScalarType::Undefined;
    for (PyObject* o : c.numbers) {
      ScalarType d = number_dtype(o);
      if (d != last) dt = promote_types(dt, last = d);
    }
    for (auto& [t, pos] : c.blocks) dt = promote_types(dt, t->dtype());
    if (dt == ScalarType::Undefined) dt = default_dtype();
  }
  Tensor out = flambeau::empty(c.shape, dt);
  visit_dtype<kValueTypes>(dt, "tensor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out->data_as<T>();
    for (size_t i = 0; i < c.numbers.size(); ++i) p[c.number_pos[i]] = number_as<T>(c.numbers[i]);
  });
  if (!c.blocks.empty()) {
    IntList sizes(c.shape.data() + c.seq_dims, c.shape.size() - c.seq_dims);
    DimVector strides = contiguous_strides(sizes);
    for (auto& [t, pos] : c.blocks) copy_into(make_view(out, sizes, strides, pos), t);
  }
  return out;
}

Tensor convert_to(const Tensor& t, std::optional<ScalarType> dtype, std::optional<Device> device,
                  bool force_copy) {
  ScalarType dt = dtype.value_or(t->dtype());
  Device dev = device.value_or(t->device());
  if (!force_copy && dt == t->dtype() && dev == t->device()) return t;
  Tensor out = flambeau::empty(t->sizes(), dt, dev);
  copy_into(out, t);
  return out;
}

// tensor(data) (copy=true) and as_tensor(data) (copy=false: share when possible).
Tensor make_tensor(const py::handle& data, const py::handle& dtype_obj,
                   const py::handle& device_obj, bool copy, const char* op) {
  std::optional<ScalarType> dtype;
  if (!dtype_obj.is_none()) dtype = dtype_from_py(dtype_obj.ptr(), op, "dtype");
  std::optional<Device> device;
  if (!device_obj.is_none()) device = device_from_py(device_obj.ptr(), op, "device");
  PyObject* o = data.ptr();
  if (is_tensor(o)) return convert_to(data.cast<Tensor>(), dtype, device, copy);
  if (is_ndarray(o)) {
    return convert_to(from_array(py::reinterpret_borrow<py::array>(o)), dtype, device, copy);
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o))
    fail<TypeError>(op, "(): invalid data type '", type_name(o), "'");
  if (is_numpy_scalar(o)) {
    return convert_to(from_array(as_ndarray(o)), dtype, device, true);
  }
  Tensor t;
  if (is_sequence(o) || is_number(o)) {
    t = from_nested(o, dtype);
  } else if (has_array_interface(o)) {
    return convert_to(from_array(as_ndarray(o)), dtype, device, copy);
  } else if (PySequence_Check(o)) {
    py::object as_list = py::reinterpret_steal<py::object>(PySequence_List(o));
    if (!as_list) throw py::error_already_set();
    t = from_nested(as_list.ptr(), dtype);
  } else {
    fail<TypeError>(op, "(): could not infer dtype of ", type_name(o));
  }
  return convert_to(t, std::nullopt, device, false);
}

// --- tolist ---

template <class T>
PyObject* to_py(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return PyBool_FromLong(v);
  } else if constexpr (is_complex_t<T>::value) {
    return PyComplex_FromDoubles(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  } else if constexpr (std::is_unsigned_v<T>) {
    return PyLong_FromUnsignedLongLong(static_cast<unsigned long long>(v));
  } else if constexpr (std::is_integral_v<T>) {
    return PyLong_FromLongLong(static_cast<long long>(v));
  } else {
    return PyFloat_FromDouble(static_cast<double>(static_cast<compute_t<T>>(v)));
  }
}

// Nested lists of t's elements; with edge > 0, a dim longer than 2 * edge
// keeps its first and last `edge` entries around an Ellipsis (for printing).
template <class T>
PyObject* to_list(const char* p, const Tensor& t, int64_t dim, int64_t edge) {
  if (dim == t->dim()) return to_py(*reinterpret_cast<const T*>(p));
  const int64_t n = t->sizes()[dim];
  const int64_t step = t->strides()[dim] * static_cast<int64_t>(sizeof(T));
  const bool cut = edge > 0 && n > 2 * edge;
  PyObject* list = PyList_New(cut ? 2 * edge + 1 : n);
  if (!list) throw py::error_already_set();
  Py_ssize_t k = 0;
  auto put = [&](int64_t i) {
    PyObject* item = to_list<T>(p + i * step, t, dim + 1, edge);
    if (!item) {
      Py_DECREF(list);
      throw py::error_already_set();
    }
    PyList_SET_ITEM(list, k++, item);
  };
  if (cut) {
    for (int64_t i = 0; i < edge; ++i) put(i);
    Py_INCREF(Py_Ellipsis);
    PyList_SET_ITEM(list, k++, Py_Ellipsis);
    for (int64_t i = n - edge; i < n; ++i) put(i);
  } else {
    for (int64_t i = 0; i < n; ++i) put(i);
  }
  return list;
}

py::object tolist(const Tensor& device_tensor, int64_t edge) {
  // A device's values are copied to the host first, as in PyTorch.
  const Tensor t = device_tensor->device().is_cpu() ? device_tensor : ops::cpu(device_tensor);
  return visit_dtype<kValueTypes>(t->dtype(), "tolist", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return py::reinterpret_steal<py::object>(to_list<T>(t->data(), t, 0, edge));
  });
}

void bind_tensor_from_data(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device, bool requires_grad) -> py::object {
        // A TorchFunctionMode sees the call, as PyTorch's do (a default-device context
        // gives it its device); a subclass among the data does not take it.
        if (FLB_UNLIKELY(torch_function::mode_active())) {
          py::dict kwargs;
          kwargs["dtype"] = dtype;
          kwargs["device"] = device;
          kwargs["requires_grad"] = requires_grad;
          return torch_function::call("tensor", false, py::handle(), py::make_tuple(data), kwargs);
        }
        Tensor t = make_tensor(data, dtype, device, /*copy=*/true, "tensor");
        if (requires_grad) {
          FLB_CHECK(is_floating(t->dtype()) || is_complex(t->dtype()),
                    "Only Tensors of floating point and complex dtype can require gradients");
          t->set_requires_grad(true);
        }
        return py::cast(t);
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false,
      "tensor(data, *, dtype=None, device=None, requires_grad=False)\n\n"
      "A new tensor holding a copy of data: nested lists/tuples of numbers, a number, a "
      "NumPy array, a tensor, or any object with __array__ or the buffer protocol. Without "
      "dtype it is inferred: bool -> bool, int -> int64, float -> the default dtype, complex "
      "-> the default complex dtype; arrays and tensors keep theirs.\n\n"
      ">>> flambeau.tensor([[1, 2], [3, 4]])\n"
      "tensor([[1, 2],\n"
      "        [3, 4]])\n"
      ">>> flambeau.tensor([1.5, 2.0], dtype=flambeau.float64, requires_grad=True)\n"
      "tensor([1.5000, 2.0000], dtype=flambeau.float64, requires_grad=True)\n");
  m.def(
      "as_tensor",
      [](py::handle data, py::handle dtype, py::handle device) -> py::object {
        if (FLB_UNLIKELY(torch_function::mode_active())) {  // as tensor() above
          py::dict kwargs;
          kwargs["dtype"] = dtype;
          kwargs["device"] = device;
          return torch_function::call("as_tensor", false, py::handle(), py::make_tuple(data),
                                      kwargs);
        }
        return py::cast(make_tensor(data, dtype, device, /*copy=*/false, "as_tensor"));
      },
      py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      "as_tensor(data, dtype=None, device=None)\n\n"
      "Like tensor(), but shares memory with data when it is a tensor or a NumPy array of "
      "the requested dtype and device.\n\n"
      ">>> import numpy as np\n"
      ">>> a = np.array([1.0, 2.0], dtype=np.float32)\n"
      ">>> t = flambeau.as_tensor(a)\n"
      ">>> a[0] = 5.0\n"
      ">>> t\n"
      "tensor([5., 2.])\n");
  cls.def(
      "tolist", [](const Tensor& t) { return tolist(t, 0); },
      "The tensor's elements as (nested lists of) Python numbers; a 0-dim tensor gives a "
      "number.");
  cls.def(
      "_tolist_summarized",
      [](const Tensor& t, int64_t edgeitems) { return tolist(t, std::max<int64_t>(edgeitems, 0)); },
      py::arg("edgeitems"),
      "tolist() keeping only the first and last edgeitems entries of long dims, with an "
      "Ellipsis between them (used by printing).");
}

}  // namespace

FLB_BINDINGS(20, bind_tensor_from_data);

}  // namespace flambeau::python
