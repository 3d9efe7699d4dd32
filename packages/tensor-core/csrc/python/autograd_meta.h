// What autograd records about one tensor, in the typed slot the core keeps on
// TensorImpl (core/tensor.h, AutogradMeta) rather than in the Python object's
// __dict__: the node that made it and which of that node's outputs it is, a
// leaf's AccumulateGrad node and gradient, the record of the base it views.
//
// The fields are Python objects (the autograd package's nodes and ViewInfo), so
// the slot lives exactly as long as the tensor's Python object: the Tensor type's
// garbage-collector hooks visit and clear it, and its deallocator drops it (a
// TensorImpl that C++ still holds after its Python object is gone keeps no
// autograd state, as it kept none when the state lived in the object's __dict__).
// See docs/design/autograd-engine-in-cpp.rst.
#pragma once
#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace flambeau::python::autograd_meta {

namespace py = pybind11;

struct TensorAutograd final : AutogradMeta {
  py::object grad_fn;        // the node whose output this tensor is (null: a leaf)
  Py_ssize_t output_nr = 0;  // which of grad_fn's outputs
  py::object accumulate;     // a leaf's AccumulateGrad node, once made
  py::object view;           // ViewInfo: a view of a base whose history autograd follows
  py::object grad;           // .grad
  py::object grad_dtype;     // null: the tensor's own dtype; None: any dtype
  ~TensorAutograd() override;
};

// The TensorImpl behind a Python tensor, read from pybind11's instance record
// without a cast (o must be a flambeau Tensor); null while it holds none.
TensorImpl* impl_of(PyObject* o);

inline TensorAutograd* find(const TensorImpl& t) {
  return static_cast<TensorAutograd*>(t.autograd_meta());  // only this layer makes them
}
TensorAutograd& get_or_create(TensorImpl& t);

// The Tensor type's hooks that tie the slot to the Python object's lifetime; called
// once from the class's py::custom_type_setup.
void setup_tensor_type(PyHeapTypeObject* heap_type);

}  // namespace flambeau::python::autograd_meta
