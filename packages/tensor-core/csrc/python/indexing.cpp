// Basic indexing: Tensor.__getitem__ / __setitem__ with ints, slices (positive
// steps), None, Ellipsis, bools and tuples of these. Every basic index gives a
// view, so __setitem__ writes through the view with copy_/fill_. Advanced
// (tensor or list) indices are rejected with a TypeError naming them.
#include <pybind11/pybind11.h>

#include <vector>

#include "generated/ops.h"
#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

// An int-like index: a Python int (not bool), a NumPy integer, or a one-element
// integer tensor (what iterating over an integer tensor yields).
bool as_int_index(PyObject* o, int64_t* out) {
  if (PyBool_Check(o)) return false;
  if (is_tensor(o)) {
    Tensor t = py::handle(o).cast<Tensor>();
    if (t->dim() != 0 || !is_integral(t->dtype(), false)) return false;
    *out = py::handle(o).attr("item")().cast<int64_t>();
    return true;
  }
  if (!PyLong_Check(o) && !PyIndex_Check(o)) return false;
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) fail<IndexError>("index ", py::str(i).cast<std::string>(), " is out of range");
  *out = v;
  return true;
}

[[noreturn]] void unsupported(PyObject* o) {
  std::string what = is_tensor(o)      ? "a Tensor (advanced indexing)"
                     : PyList_Check(o) ? "a list (advanced indexing)"
                                       : std::string("an object of type ") + Py_TYPE(o)->tp_name;
  fail<TypeError>("flambeau: indexing with ", what,
                  " is not supported yet; only integers, slices, None, Ellipsis and bools "
                  "(and tuples of them) are");
}

// The view `self[index]` for a basic index.
Tensor basic_index(const Tensor& self, PyObject* index) {
  std::vector<PyObject*> items;
  if (PyTuple_Check(index)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i)
      items.push_back(PyTuple_GET_ITEM(index, i));
  } else {
    items.push_back(index);
  }
  // How many dims the indices consume, so Ellipsis knows how many it stands for.
  int64_t consumed = 0;
  bool ellipsis = false;
  for (PyObject* o : items) {
    int64_t unused;
    if (o == Py_Ellipsis) {
      FLB_CHECK_T(IndexError, !ellipsis, "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (PySlice_Check(o) || as_int_index(o, &unused)) {
      ++consumed;
    } else if (o != Py_None && !PyBool_Check(o)) {
      unsupported(o);
    }
  }
  if (self->dim() == 0 && consumed > 0) {
    for (PyObject* o : items) {
      int64_t unused;
      FLB_CHECK_T(IndexError, !as_int_index(o, &unused),
                  "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
    }
  }
  FLB_CHECK_T(IndexError, consumed <= self->dim(), "too many indices for tensor of dimension ",
              self->dim());

  DimVector sizes(self->sizes()), strides(self->strides());
  int64_t offset = self->offset();
  size_t d = 0;     // position in the result's dims
  int64_t src = 0;  // the original dim the next index applies to
  for (PyObject* o : items) {
    int64_t i;
    if (o == Py_Ellipsis) {
      int64_t n = self->dim() - consumed;
      d += static_cast<size_t>(n);
      src += n;
    } else if (o == Py_None || PyBool_Check(o)) {
      // None adds a size-1 dim; True likewise, False a size-0 one.
      int64_t stride = d < sizes.size() ? sizes[d] * strides[d] : 1;
      sizes.insert(d, o == Py_False ? 0 : 1);
      strides.insert(d, stride);
      ++d;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
      FLB_CHECK_T(ValueError, step > 0, "step must be greater than zero");
      Py_ssize_t len =
          PySlice_AdjustIndices(static_cast<Py_ssize_t>(sizes[d]), &start, &stop, step);
      offset += static_cast<int64_t>(start) * strides[d];
      sizes[d] = len;
      strides[d] *= step;
      ++d;
      ++src;
    } else if (as_int_index(o, &i)) {
      int64_t size = sizes[d];
      FLB_CHECK_T(IndexError, i >= -size && i < size, "index ", i,
                  " is out of bounds for dimension ", src, " with size ", size);
      if (i < 0) i += size;
      offset += i * strides[d];
      sizes.erase(d);
      strides.erase(d);
      ++src;
    }
  }
  return make_view(self, sizes, strides, offset);
}

py::object getitem(py::handle self, py::handle index) {
  Tensor t = py::cast<Tensor>(self);
  if (FLB_UNLIKELY(autograd_slot::wants_tensors(t)))
    return autograd_slot::call("__getitem__", self, py::make_tuple(index), py::dict());
  return py::cast(basic_index(t, index.ptr()));
}

void setitem(py::handle self, py::handle index, py::handle value) {
  Tensor t = py::cast<Tensor>(self);
  Tensor v = is_tensor(value.ptr()) ? py::cast<Tensor>(value) : Tensor();
  if (FLB_UNLIKELY(autograd_slot::wants_tensors(t, v))) {
    autograd_slot::call("__setitem__", self, py::make_tuple(index, value), py::dict());
    return;
  }
  Tensor view = basic_index(t, index.ptr());
  if (v) {
    ops::copy_(view, v, false);
  } else if (is_number(value.ptr())) {
    ops::fill_(view, scalar_from_py(value.ptr(), "__setitem__", "value"));
  } else {
    fail<TypeError>(
        "flambeau: can only assign a Tensor or a Python number to an indexed "
        "tensor, not ",
        Py_TYPE(value.ptr())->tp_name);
  }
}

void bind_indexing(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
  cls.def("__iter__", [](py::handle self) {
    Tensor t = py::cast<Tensor>(self);
    FLB_CHECK_T(TypeError, t->dim() > 0, "iteration over a 0-d tensor");
    py::tuple rows(static_cast<size_t>(t->sizes()[0]));
    for (int64_t i = 0; i < t->sizes()[0]; ++i) rows[i] = getitem(self, py::int_(i));
    return py::iter(rows);
  });
  (void)m;
}

}  // namespace

FLB_BINDINGS(20, bind_indexing);

}  // namespace flambeau::python
