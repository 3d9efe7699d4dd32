// Zero-copy exchange with NumPy: Tensor.numpy() views the tensor's storage, and
// from_numpy() wraps an array's memory, keeping the array alive.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

py::dtype numpy_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return py::dtype("bool");
    case ScalarType::UInt8:
      return py::dtype("uint8");
    case ScalarType::UInt16:
      return py::dtype("uint16");
    case ScalarType::UInt32:
      return py::dtype("uint32");
    case ScalarType::UInt64:
      return py::dtype("uint64");
    case ScalarType::Int8:
      return py::dtype("int8");
    case ScalarType::Int16:
      return py::dtype("int16");
    case ScalarType::Int32:
      return py::dtype("int32");
    case ScalarType::Int64:
      return py::dtype("int64");
    case ScalarType::Float16:
      return py::dtype("float16");
    case ScalarType::Float32:
      return py::dtype("float32");
    case ScalarType::Float64:
      return py::dtype("float64");
    case ScalarType::Complex64:
      return py::dtype("complex64");
    case ScalarType::Complex128:
      return py::dtype("complex128");
    default:
      fail<TypeError>("numpy(): NumPy has no dtype for ", dtype_name(t),
                      "; convert first, e.g. t.float().numpy()");
  }
}

ScalarType from_numpy_dtype(const py::dtype& d) {
  FLB_CHECK_T(TypeError, d.byteorder() != '>',
              "from_numpy(): big-endian arrays are not supported; use "
              "arr.astype(arr.dtype.newbyteorder('='))");
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'u') {
    switch (size) {
      case 1:
        return ScalarType::UInt8;
      case 2:
        return ScalarType::UInt16;
      case 4:
        return ScalarType::UInt32;
      case 8:
        return ScalarType::UInt64;
    }
  }
  if (kind == 'i') {
    switch (size) {
      case 1:
        return ScalarType::Int8;
      case 2:
        return ScalarType::Int16;
      case 4:
        return ScalarType::Int32;
      case 8:
        return ScalarType::Int64;
    }
  }
  if (kind == 'f') {
    switch (size) {
      case 2:
        return ScalarType::Float16;
      case 4:
        return ScalarType::Float32;
      case 8:
        return ScalarType::Float64;
    }
  }
  if (kind == 'c' && size == 8) return ScalarType::Complex64;
  if (kind == 'c' && size == 16) return ScalarType::Complex128;
  fail<TypeError>("from_numpy(): can't convert np.ndarray of type ", py::str(d).cast<std::string>(),
                  ". The only supported types are: float64, float32, float16, complex64, "
                  "complex128, int64, int32, int16, int8, uint8, and bool.");
}

}  // namespace

void release_py_owner(void* ctx, void*) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  Py_DECREF(static_cast<PyObject*>(ctx));
}

py::array tensor_to_numpy(const Tensor& t) {
  FLB_CHECK_T(TypeError, t->device().is_cpu(), "can't convert ", t->device().str(),
              " tensor to numpy; use Tensor.cpu() to copy the tensor to host memory first");
  FLB_CHECK(
      !t->requires_grad(),
      "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  std::vector<py::ssize_t> shape(t->sizes().begin(), t->sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t->strides()) strides.push_back(s * static_cast<int64_t>(t->itemsize()));
  // The array's base holds the storage itself, not the tensor: set_, resize_ or
  // `.data =` may re-point the tensor, and a reallocation keeps exported memory.
  const Storage& storage = t->storage();
  storage->mark_exported();
  py::capsule base(new Storage(storage), [](void* p) { delete static_cast<Storage*>(p); });
  return py::array(numpy_dtype(t->dtype()), shape, strides, t->data(), base);
}

Tensor tensor_from_numpy(const py::array& arr) {
  ScalarType dtype = from_numpy_dtype(arr.dtype());
  const int64_t item = static_cast<int64_t>(itemsize(dtype));
  DimVector sizes, strides;
  int64_t extent = 1;
  bool empty_array = false;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    int64_t st = arr.strides(d);
    FLB_CHECK_T(ValueError, st >= 0,
                "from_numpy(): at least one stride in the given numpy array is negative, and "
                "tensors with negative strides are not currently supported. (You can probably "
                "work around this by making a copy of your array with array.copy().)");
    FLB_CHECK_T(ValueError, st % item == 0,
                "from_numpy(): given numpy array strides not a "
                "multiple of the element byte size. Copy the numpy "
                "array to reallocate the memory.");
    sizes.push_back(arr.shape(d));
    strides.push_back(st / item);
    if (arr.shape(d) == 0) empty_array = true;
    extent += (arr.shape(d) - 1) * (st / item);
  }
  if (empty_array) extent = 0;
  if (!arr.writeable()) {
    // PyTorch's behaviour: share anyway, and say once that writes go where the array
    // forbids them (a bytes object, a read-only memory map).
    static bool warned = false;
    if (!warned) {
      warned = true;
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "The given NumPy array is not writable, and flambeau does not support "
                       "non-writable tensors: writing to this tensor changes memory the array "
                       "does not allow to change (undefined behavior). Copy the array or make "
                       "it writable before converting it. This warning is shown once.",
                       1) != 0)
        throw py::error_already_set();
    }
  }
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  DataPtr data{const_cast<void*>(arr.data()), owner, &release_py_owner};
  auto storage = make_ref<StorageImpl>(data, static_cast<size_t>(extent * item), Device{});
  return make_ref<TensorImpl>(storage, sizes, strides, 0, dtype);
}

namespace {

void bind_numpy(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def(
      "numpy",
      [](const Tensor& t, bool force) {
        (void)force;
        return tensor_to_numpy(t);
      },
      py::arg("force") = false, "A NumPy array sharing this tensor's memory.");
  // The array protocol: np.asarray(t) is a view of t's memory (no copy).
  cls.def(
      "__array__",
      [](const Tensor& t, py::handle dtype, py::handle copy) -> py::object {
        FLB_CHECK_T(TypeError, t->dtype() != ScalarType::BFloat16,
                    "__array__: NumPy has no bfloat16 dtype, so a bfloat16 tensor can't become "
                    "an array; convert it first, e.g. np.asarray(t.float())");
        py::array arr = tensor_to_numpy(t);
        const bool want_copy = !copy.is_none() && PyObject_IsTrue(copy.ptr());
        if (!dtype.is_none()) {
          py::dtype target = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
          if (!target.is(arr.dtype()) && !target.equal(arr.dtype())) {
            FLB_CHECK_T(ValueError, copy.is_none() || want_copy,
                        "__array__: unable to avoid a copy while converting ",
                        dtype_name(t->dtype()), " to ", py::str(target).cast<std::string>(),
                        " (copy=False)");
            return arr.attr("astype")(target);
          }
        }
        if (want_copy) return arr.attr("copy")();
        return arr;
      },
      py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
      "A NumPy array viewing this tensor's memory; with dtype, converted (a copy); with "
      "copy=True, always a copy.");
  // NumPy defers mixed tensor/array binary operators to the tensor.
  cls.attr("__array_priority__") = 1000;
  m.def(
      "from_numpy",
      [](const py::object& obj) {
        FLB_CHECK_T(TypeError, py::isinstance<py::array>(obj),
                    "from_numpy(): expected np.ndarray (got ", Py_TYPE(obj.ptr())->tp_name, ")");
        return tensor_from_numpy(py::reinterpret_borrow<py::array>(obj));
      },
      py::arg("ndarray"),
      "A tensor sharing the memory of a NumPy array; the array stays alive as long as the "
      "tensor does.\n\n"
      ">>> import numpy as np\n"
      ">>> a = np.array([1, 2, 3])\n"
      ">>> t = flambeau.from_numpy(a)\n"
      ">>> a[0] = -1\n"
      ">>> t\n"
      "tensor([-1,  2,  3])\n");
}

}  // namespace

FLB_BINDINGS(10, bind_numpy);

}  // namespace flambeau::python
