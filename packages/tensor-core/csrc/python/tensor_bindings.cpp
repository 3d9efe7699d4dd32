// Tensor attributes that are not operators: geometry, dtype/device, flags and
// conversions to Python numbers.
#include <pybind11/pybind11.h>

#include <utility>

#include "generated/ops_tensor.h"
#include "python/binding_support.h"
#include "python/device_bindings.h"
#include "python/profiler.h"
#include "python/registry.h"
#include "python/size_type.h"
#include "python/tensor_attributes.h"

namespace flambeau::python {

namespace {

using size_type::size_object;

py::tuple int_tuple(IntList v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

// The value of a one-element tensor as a Python number.
py::object item(const Tensor& device_tensor) {
  FLB_CHECK(device_tensor->numel() == 1, "item(): a Tensor with ", device_tensor->numel(),
            " elements cannot be converted to Scalar");
  // A device's value is copied to the host first (which waits for its work), as in PyTorch.
  const Tensor t = device_tensor->device().is_cpu() ? device_tensor : ops::cpu(device_tensor);
  return visit_dtype<kValueTypes>(t->dtype(), "item", [&](auto tag) -> py::object {
    using T = typename decltype(tag)::type;
    T v = *t->data_as<T>();
    if constexpr (std::is_same_v<T, bool>)
      return py::bool_(v);
    else if constexpr (is_complex_t<T>::value)
      return py::reinterpret_steal<py::object>(
          PyComplex_FromDoubles(static_cast<double>(v.real()), static_cast<double>(v.imag())));
    else if constexpr (std::is_integral_v<T>)
      return py::int_(v);
    else
      return py::float_(static_cast<double>(static_cast<compute_t<T>>(v)));
  });
}

// `self.data = value` (PyTorch's Variable.set_data): self, the same Python object with
// its gradient and flags, views value's storage with value's geometry and dtype. It is
// not an operator: autograd does not see it, and self's version does not change.
void set_data(const Tensor& self, py::handle value) {
  FLB_CHECK_T(TypeError, is_tensor(value.ptr()), "Variable data has to be a tensor, but got ",
              Py_TYPE(value.ptr())->tp_name);
  Tensor src = value.cast<Tensor>();
  FLB_CHECK(!self->requires_grad() || is_floating(src->dtype()) || is_complex(src->dtype()),
            "data set to a tensor that requires gradients must be floating point or complex "
            "dtype");
  DimVector sizes(src->sizes()), strides(src->strides());  // src may be self
  self->set_storage(src->storage(), /*count_as_write=*/false);
  self->set_dtype(src->dtype());
  self->set_geometry(sizes, strides, src->offset());
}

}  // namespace

namespace tensor_attributes {
namespace {
PyObject* shape(const TensorImpl& t) { return size_object(t.sizes()).release().ptr(); }
PyObject* dtype(const TensorImpl& t) { return Py_NewRef(dtype_object(t.dtype())); }
PyObject* device(const TensorImpl& t) { return device_object(t.device()).release().ptr(); }
PyObject* ndim(const TensorImpl& t) { return PyLong_FromLongLong(t.dim()); }

const std::pair<const char*, Getter> kGetters[] = {
    {"shape", shape}, {"dtype", dtype}, {"device", device}, {"ndim", ndim}};
}  // namespace

Getter find(PyObject* name) {
  for (const auto& [n, g] : kGetters)
    if (PyUnicode_CompareWithASCIIString(name, n) == 0) return g;
  return nullptr;
}
}  // namespace tensor_attributes

namespace {

void bind_tensor(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  using tensor_attributes::get;
  cls.def_property_readonly("shape",
                            [](const Tensor& t) { return get(tensor_attributes::shape, t); })
      .def(
          "size",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return size_object(t->sizes());
            return py::int_(t->size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return int_tuple(t->strides());
            return py::int_(t->stride(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def("dim", [](const Tensor& t) { return t->dim(); })
      .def("ndimension", [](const Tensor& t) { return t->dim(); })
      .def_property_readonly("ndim",
                             [](const Tensor& t) { return get(tensor_attributes::ndim, t); })
      .def("numel", [](const Tensor& t) { return t->numel(); })
      .def("nelement", [](const Tensor& t) { return t->numel(); })
      .def_property_readonly("dtype",
                             [](const Tensor& t) { return get(tensor_attributes::dtype, t); })
      .def_property_readonly("device",
                             [](const Tensor& t) { return get(tensor_attributes::device, t); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t->device().is_cpu(); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t->device().type == kCUDA; })
      // is_contiguous(memory_format=...) is bound in memory_format_bindings.cpp.
      .def("is_floating_point", [](const Tensor& t) { return is_floating_point_dtype(t->dtype()); })
      .def("is_complex", [](const Tensor& t) { return is_complex_dtype(t->dtype()); })
      .def("data_ptr",
           [](const Tensor& t) {  // 0 for a meta tensor, which has no data, as in PyTorch
             return t->device().has_data() ? reinterpret_cast<uintptr_t>(t->data()) : 0;
           })
      .def("storage_offset", [](const Tensor& t) { return t->offset(); })
      .def("element_size", [](const Tensor& t) { return t->itemsize(); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t->itemsize(); })
      .def_property_readonly("nbytes", [](const Tensor& t) { return t->numel() * t->itemsize(); })
      .def_property_readonly("_version", [](const Tensor& t) { return t->version(); })
      .def(
          "is_inference", [](const Tensor& t) { return t->is_inference(); },
          "Whether this tensor was made in inference mode (an inference tensor).")
      .def_property_readonly("_metadata_version",
                             [](const Tensor& t) { return t->metadata_version(); })
      .def("_storage_ptr",
           [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->storage()->data()); })
      .def("_storage_nbytes", [](const Tensor& t) { return t->storage()->nbytes(); })
      .def("_is_view_of",
           [](const Tensor& a, const Tensor& b) { return a->storage() == b->storage(); })
      .def_property_readonly(
          "_base",
          [](const Tensor& t) -> py::object {
            TensorImpl* base = t->view_base();
            return base ? py::cast(Tensor(base)) : py::none();
          },
          "The tensor this one is a view of (made by a view operator), else None.")
      .def(
          "_is_view", [](const Tensor& t) { return t->view_base() != nullptr; },
          "Whether a view operator made this tensor from another (its _base).")
      .def_property(
          "requires_grad", [](const Tensor& t) { return t->requires_grad(); },
          [](const Tensor& t, bool r) {
            FLB_CHECK(!r || is_floating(t->dtype()) || is_complex(t->dtype()),
                      "only Tensors of floating point and complex dtype can require gradients");
            if (r && t->is_inference() && !inference_mode_enabled()) fail_inference_requires_grad();
            t->set_requires_grad(r);
          })
      .def("_set_data", &set_data, py::arg("value"),
           "Re-points self at value's storage, geometry and dtype (the `data` setter).")
      .def("item",
           [](py::handle self) {
             profiler::OpScope profiled("aten::item", {self.ptr()});
             return item(py::cast<Tensor>(self));
           })
      .def("__len__",
           [](const Tensor& t) {
             FLB_CHECK_T(TypeError, t->dim() > 0, "len() of a 0-d tensor");
             return t->sizes()[0];
           })
      .def("__bool__",
           [](const Tensor& t) {
             FLB_CHECK(t->numel() == 1, "Boolean value of Tensor with ", t->numel(),
                       " elements is ambiguous");
             return PyObject_IsTrue(item(t).ptr()) == 1;
           })
      .def("__float__",
           [](const Tensor& t) {
             // PyTorch's warning, once per process: the float is cut off from autograd.
             static bool warned = false;
             if (t->requires_grad() && !warned) {
               warned = true;
               if (PyErr_WarnEx(PyExc_UserWarning,
                                "Converting a tensor with requires_grad=True to a scalar may "
                                "lead to unexpected behavior.\nConsider using tensor.detach() "
                                "first.",
                                1) < 0)
                 throw py::error_already_set();
             }
             return item(t).cast<double>();
           })
      .def("__int__",
           [](const Tensor& t) {
             py::object v = item(t);
             return py::int_(py::reinterpret_steal<py::object>(PyNumber_Long(v.ptr())));
           })
      .def("__complex__",
           [](const Tensor& t) {
             py::object v = item(t);
             return py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(
                 reinterpret_cast<PyObject*>(&PyComplex_Type), v.ptr(), nullptr));
           })
      .def("__index__", [](const Tensor& t) {
        FLB_CHECK_T(TypeError, is_integral(t->dtype(), true) && t->numel() == 1,
                    "only integer tensors of a single element can be converted to an index");
        return item(t);
      });
  (void)m;
}

}  // namespace

FLB_BINDINGS(0, bind_tensor);

}  // namespace flambeau::python
