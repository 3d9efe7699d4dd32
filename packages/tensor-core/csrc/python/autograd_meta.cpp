// The autograd slot of a tensor (autograd_meta.h): its lifetime hooks and the
// Tensor attributes that read and write it.
#include "python/autograd_meta.h"

#include "python/arg_parser.h"
#include "python/registry.h"

namespace flambeau::python::autograd_meta {

TensorAutograd::~TensorAutograd() {
  // The Python object's deallocator drops the slot with the GIL held (the common
  // case: the members then let go of their references as usual). Anywhere else, the
  // references are dropped under the GIL taken here, or, once the interpreter is
  // gone, abandoned with it.
  if (!grad_fn && !accumulate && !view && !grad && !grad_dtype) return;
  if (!Py_IsInitialized()) {
    for (py::object* o : {&grad_fn, &accumulate, &view, &grad, &grad_dtype}) o->release();
    return;
  }
  if (PyGILState_Check()) return;
  py::gil_scoped_acquire gil;
  grad_fn = accumulate = view = grad = grad_dtype = py::object();
}

TensorImpl* impl_of(PyObject* o) {
  auto* inst = reinterpret_cast<py::detail::instance*>(o);
  if (inst->simple_layout)  // Ref<TensorImpl> is one pointer: pybind11's simple layout
    return inst->simple_holder_constructed ? static_cast<TensorImpl*>(inst->simple_value_holder[0])
                                           : nullptr;
  auto vh = inst->get_value_and_holder();
  return vh.holder_constructed() ? vh.value_ptr<TensorImpl>() : nullptr;
}

TensorAutograd& get_or_create(TensorImpl& t) {
  if (TensorAutograd* m = find(t)) return *m;
  auto m = std::make_unique<TensorAutograd>();
  TensorAutograd& ref = *m;
  t.set_autograd_meta(std::move(m));
  return ref;
}

namespace {

traverseproc g_base_traverse = nullptr;
inquiry g_base_clear = nullptr;
destructor g_base_dealloc = nullptr;

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  if (TensorImpl* t = impl_of(self))
    if (TensorAutograd* m = find(*t)) {
      Py_VISIT(m->grad_fn.ptr());
      Py_VISIT(m->accumulate.ptr());
      Py_VISIT(m->view.ptr());
      Py_VISIT(m->grad.ptr());
      Py_VISIT(m->grad_dtype.ptr());
    }
  return g_base_traverse(self, visit, arg);
}

// Drops the slot: moved out first, so that code run by the references it drops
// finds the tensor without one.
void drop_slot(PyObject* self) {
  if (TensorImpl* t = impl_of(self)) t->take_autograd_meta().reset();
}

int tensor_clear(PyObject* self) {
  drop_slot(self);
  return g_base_clear(self);
}

void tensor_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);  // no collection may visit it while its slot goes
  drop_slot(self);
  g_base_dealloc(self);
}

TensorAutograd* slot_of(const Tensor& t) { return find(*t); }

using Field = py::object TensorAutograd::*;

// A Tensor attribute that reads one of the slot's fields (None when unset) and
// stores into it (None clears it).
template <Field F>
void def_field(py::class_<TensorImpl, Tensor>& cls, const char* name, const char* doc) {
  cls.def_property(
      name,
      [](const Tensor& t) {
        TensorAutograd* s = slot_of(t);
        return s && s->*F ? s->*F : py::none();
      },
      [](const Tensor& t, const py::object& v) {
        if (!v.is_none())
          get_or_create(*t).*F = v;
        else if (TensorAutograd* s = slot_of(t))
          s->*F = py::object();
      },
      doc);
}

void bind(py::module_&, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def_property_readonly(
         "grad_fn",
         [](const Tensor& t) {
           TensorAutograd* s = slot_of(t);
           return s && s->grad_fn ? s->grad_fn : py::none();
         },
         "The node of the autograd graph that made this tensor; None for a leaf.")
      .def_property_readonly(
          "output_nr",
          [](const Tensor& t) {
            TensorAutograd* s = slot_of(t);
            return s && s->grad_fn ? s->output_nr : Py_ssize_t{0};
          },
          "Which output of its grad_fn this tensor is (0 for a leaf).")
      .def_property_readonly(
          "is_leaf",
          [](const Tensor& t) {
            TensorAutograd* s = slot_of(t);
            return !s || !s->grad_fn;
          },
          "Whether this tensor has no grad_fn: created by the user, or by operations that "
          "autograd did not record.")
      .def(
          "_set_grad_fn",
          [](const Tensor& t, const py::object& node, Py_ssize_t output_nr) {
            if (node.is_none()) {
              if (TensorAutograd* s = slot_of(t)) {
                s->grad_fn = py::object();
                s->output_nr = 0;
              }
              return;
            }
            TensorAutograd& s = get_or_create(*t);
            s.grad_fn = node;
            s.output_nr = output_nr;
          },
          py::arg("node"), py::arg("output_nr") = 0,
          "Autograd's: make this tensor output `output_nr` of `node` (None: no node).")
      .def_property(
          "_grad_dtype",
          [](const Tensor& t) {
            TensorAutograd* s = slot_of(t);
            if (s && s->grad_dtype) return s->grad_dtype;
            return py::reinterpret_borrow<py::object>(dtype_object(t->dtype()));
          },
          [](const Tensor& t, const py::object& v) {
            get_or_create(*t).grad_dtype = v;  // None is a value here: any dtype
          },
          "The dtype a leaf's .grad must have (its own unless set; None: any).");
  def_field<&TensorAutograd::view>(
      cls, "_view", "Autograd's record of the base this tensor views (a ViewInfo), or None.");
  def_field<&TensorAutograd::accumulate>(
      cls, "_accumulate", "A leaf's AccumulateGrad node, once autograd made one, or None.");
  def_field<&TensorAutograd::grad>(
      cls, "grad", "The gradient accumulated into this tensor by backward (None until then).");
}

FLB_BINDINGS(1, bind);

}  // namespace

void setup_tensor_type(PyHeapTypeObject* heap_type) {
  PyTypeObject* type = &heap_type->ht_type;
  g_base_traverse = type->tp_traverse;  // pybind11's dynamic_attr hooks (the __dict__)
  g_base_clear = type->tp_clear;
  g_base_dealloc = type->tp_dealloc ? type->tp_dealloc : py::detail::pybind11_object_dealloc;
  type->tp_traverse = tensor_traverse;
  type->tp_clear = tensor_clear;
  type->tp_dealloc = tensor_dealloc;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  // Python 3.11 keeps a managed __dict__ before the object, and gives a class that
  // has one the tp_dictoffset below; pybind11 leaves it 0, so every Python subclass
  // (`class MyTensor(Tensor): pass`) "added" a dict of its own, and CPython refused to
  // re-class a tensor as it (x.as_subclass(MyTensor), nn.Parameter's subclasses):
  // "object layout differs". With CPython's own value the subclass adds nothing.
  if ((type->tp_flags & Py_TPFLAGS_MANAGED_DICT) && type->tp_dictoffset == 0)
    type->tp_dictoffset = -type->tp_basicsize - 3 * static_cast<Py_ssize_t>(sizeof(PyObject*));
#endif
}

}  // namespace flambeau::python::autograd_meta
