// What flambeau.utils.swap_tensors needs of the core: two Python tensors exchange the
// TensorImpl they hold (data, geometry, dtype and the autograd slot go with it), each
// object keeping its identity; and the count of references to a TensorImpl, so that
// the swap can refuse a tensor that C++ still holds elsewhere.
#include "core/error.h"
#include "python/arg_parser.h"
#include "python/registry.h"

namespace flambeau::python {
namespace {

void swap_tensor_impl(py::handle a, py::handle b) {
  FLB_CHECK_T(TypeError, is_tensor(a.ptr()) && is_tensor(b.ptr()),
              "_swap_tensor_impl() takes two tensors");
  if (a.is(b)) return;
  const py::detail::type_info* tinfo = py::detail::get_type_info(typeid(TensorImpl));
  auto* ia = reinterpret_cast<py::detail::instance*>(a.ptr());
  auto* ib = reinterpret_cast<py::detail::instance*>(b.ptr());
  py::detail::value_and_holder va = ia->get_value_and_holder(tinfo);
  py::detail::value_and_holder vb = ib->get_value_and_holder(tinfo);
  FLB_CHECK(va.holder_constructed() && vb.holder_constructed(),
            "_swap_tensor_impl(): a tensor holds no data (it is being constructed)");
  // pybind11 maps each TensorImpl back to its Python object: re-register both.
  py::detail::deregister_instance(ia, va.value_ptr(), tinfo);
  py::detail::deregister_instance(ib, vb.value_ptr(), tinfo);
  std::swap(va.value_ptr(), vb.value_ptr());
  std::swap(va.holder<Tensor>(), vb.holder<Tensor>());
  py::detail::register_instance(ia, va.value_ptr(), tinfo);
  py::detail::register_instance(ib, vb.value_ptr(), tinfo);
}

void bind_tensor_swap(py::module_& m, py::object cls_obj) {
  m.def("_swap_tensor_impl", &swap_tensor_impl, py::arg("t1"), py::arg("t2"),
        "Exchanges the TensorImpl two tensors hold (flambeau.utils.swap_tensors).");
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def(
      "_use_count", [](const Tensor& t) { return t->use_count() - 1; },
      "How many references hold this tensor's TensorImpl, its Python object's included.");
}

}  // namespace

FLB_BINDINGS(0, bind_tensor_swap);

}  // namespace flambeau::python
