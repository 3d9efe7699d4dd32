// Tensor.__getitem__ / __setitem__ with every index PyTorch accepts: ints,
// slices, None, Ellipsis, bools, and advanced indices (integer or bool tensors,
// lists, NumPy arrays). The basic items (ints, slices, None, Ellipsis) always
// give a view; advanced items then go through the `index` / `index_put_`
// operators of the table, on that view, so autograd records each step.
#include <pybind11/pybind11.h>

#include <vector>

#include "generated/ops_indexing.h"
#include "generated/ops_tensor.h"
#include "python/binding_support.h"
#include "python/profiler.h"
#include "python/registry.h"
#include "python/torch_function.h"

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
  // NumPy arrays implement __index__ too; only 0-dim ones are integers.
  if (!PyLong_Check(o) && PyObject_HasAttrString(o, "ndim") &&
      py::handle(o).attr("ndim").cast<int64_t>() != 0)
    return false;
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) fail<IndexError>("index ", py::str(i).cast<std::string>(), " is out of range");
  *out = v;
  return true;
}

py::object g_module;  // flambeau._C: tensor() converts list indices, index() records

// A bool index: Python or NumPy bool, or a 0-dim bool tensor.
bool as_bool_index(PyObject* o, bool* out) {
  if (PyBool_Check(o)) {
    *out = o == Py_True;
    return true;
  }
  if (is_tensor(o)) {
    Tensor t = py::handle(o).cast<Tensor>();
    if (t->dim() != 0 || t->dtype() != ScalarType::Bool) return false;
    *out = py::handle(o).attr("item")().cast<bool>();
    return true;
  }
  std::string type = Py_TYPE(o)->tp_name;
  if (type == "numpy.bool_" || type == "numpy.bool") {
    *out = PyObject_IsTrue(o) == 1;
    return true;
  }
  return false;
}

[[noreturn]] void unsupported(PyObject* o) {
  const char* type = Py_TYPE(o)->tp_name;
  if (PyFloat_Check(o) || PyComplex_Check(o))
    fail<IndexError>(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
        "Variables are valid indices (got ",
        type, ")");
  fail<TypeError>("flambeau: a tensor cannot be indexed with an object of type ", type,
                  "; use integers, slices, None, Ellipsis, bools, or integer/bool tensors, "
                  "lists or arrays");
}

// An advanced index as a tensor: tensors as they are; lists, nested tuples and
// arrays converted as flambeau.tensor() does (an empty list is an int64 index).
Tensor advanced_tensor(PyObject* o) {
  if (is_tensor(o)) return py::handle(o).cast<Tensor>();
  // Any sequence indexes as the tensor of its items (a list, a tuple, a range), as in
  // PyTorch; strings and bytes are sequences too, but not indices.
  bool seq =
      PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && !PyByteArray_Check(o);
  if (!seq && !PyObject_HasAttrString(o, "__array__")) unsupported(o);
  Tensor t = g_module.attr("tensor")(py::handle(o)).cast<Tensor>();
  if (seq && t->numel() == 0) t = empty(t->sizes(), ScalarType::Int64);
  return t;
}

// One item of an index expression, classified.
struct Item {
  enum Kind { kEllipsis, kNone, kBool, kInt, kSlice, kAdvanced } kind;
  PyObject* obj;
  bool flag = false;      // kBool: its value
  Tensor tensor;          // kAdvanced
  int64_t dims() const {  // dims of self it consumes
    if (kind == kInt || kind == kSlice) return 1;
    if (kind != kAdvanced) return 0;
    ScalarType t = tensor->dtype();
    return t == ScalarType::Bool || t == ScalarType::UInt8 ? std::max<int64_t>(tensor->dim(), 0)
                                                           : 1;
  }
};

std::vector<Item> classify(PyObject* index, bool* advanced) {
  std::vector<PyObject*> objs;
  if (PyTuple_Check(index)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i)
      objs.push_back(PyTuple_GET_ITEM(index, i));
  } else {
    objs.push_back(index);
  }
  std::vector<Item> items;
  *advanced = false;
  for (PyObject* o : objs) {
    int64_t unused;
    bool b;
    if (o == Py_Ellipsis) {
      items.push_back({Item::kEllipsis, o});
    } else if (o == Py_None) {
      items.push_back({Item::kNone, o});
    } else if (PySlice_Check(o)) {
      items.push_back({Item::kSlice, o});
    } else if (as_bool_index(o, &b)) {
      items.push_back({Item::kBool, o, b});
    } else if (as_int_index(o, &unused)) {
      items.push_back({Item::kInt, o});
    } else {
      Item it{Item::kAdvanced, o};
      it.tensor = advanced_tensor(o);
      if (it.tensor->dim() == 0 && it.tensor->dtype() == ScalarType::Bool) {
        it = Item{Item::kBool, o, *it.tensor->data_as<bool>()};
      } else if (it.tensor->dim() == 0 && is_integral(it.tensor->dtype(), false)) {
        it.kind = Item::kInt;  // a 0-dim integer array selects like an int
      } else {
        *advanced = true;
      }
      items.push_back(it);
    }
  }
  return items;
}

// An index with advanced items split in two steps: `basic`, a basic index that
// keeps the advanced dims whole (and turns bools into new unit dims), and
// `indices`, the index() argument over the dims of the view `basic` gives.
struct Split {
  py::tuple basic;
  std::vector<Tensor> indices;
};

Split split_advanced(const std::vector<Item>& items, int64_t ndim) {
  int64_t consumed = 0;
  for (const Item& it : items) consumed += it.dims();
  py::list basic;
  std::vector<Tensor> indices;
  py::object full = py::reinterpret_steal<py::object>(PySlice_New(nullptr, nullptr, nullptr));
  for (const Item& it : items) {
    switch (it.kind) {
      case Item::kEllipsis:
        basic.append(py::ellipsis());
        for (int64_t k = 0; k < ndim - consumed; ++k) indices.emplace_back();
        break;
      case Item::kNone:
      case Item::kSlice:
        basic.append(py::handle(it.obj));
        indices.emplace_back();
        break;
      case Item::kBool:  // a unit dim, kept (True) or emptied (False) by the index
        basic.append(py::none());
        indices.push_back(empty(DimVector{static_cast<int64_t>(it.flag)}, ScalarType::Int64));
        if (it.flag) *indices.back()->data_as<int64_t>() = 0;
        break;
      case Item::kInt:
        basic.append(py::handle(it.obj));
        break;
      case Item::kAdvanced:
        for (int64_t k = 0; k < it.dims(); ++k) basic.append(full);
        indices.push_back(it.tensor);
        break;
    }
  }
  while (!indices.empty() && !indices.back()) indices.pop_back();
  return {py::tuple(basic), indices};
}

py::list indices_to_py(const std::vector<Tensor>& indices) {
  py::list l;
  for (const Tensor& t : indices) l.append(t ? py::cast(t) : py::none());
  return l;
}

// The view `self[items]` for basic items (no kAdvanced among them).
Tensor basic_index(const Tensor& self, const std::vector<Item>& items) {
  // How many dims the indices consume, so Ellipsis knows how many it stands for.
  int64_t consumed = 0;
  bool ellipsis = false;
  for (const Item& it : items) {
    if (it.kind == Item::kEllipsis) {
      FLB_CHECK_T(IndexError, !ellipsis, "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    }
    consumed += it.dims();
  }
  if (self->dim() == 0 && consumed > 0) {
    for (const Item& it : items) {
      FLB_CHECK_T(IndexError, it.kind != Item::kInt,
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
  for (const Item& it : items) {
    PyObject* o = it.obj;
    int64_t i;
    if (it.kind == Item::kEllipsis) {
      int64_t n = self->dim() - consumed;
      d += static_cast<size_t>(n);
      src += n;
    } else if (it.kind == Item::kNone || it.kind == Item::kBool) {
      // None adds a size-1 dim; True likewise, False a size-0 one.
      int64_t stride = d < sizes.size() ? sizes[d] * strides[d] : 1;
      sizes.insert(d, it.kind == Item::kBool && !it.flag ? 0 : 1);
      strides.insert(d, stride);
      ++d;
    } else if (it.kind == Item::kSlice) {
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
    } else if (it.kind == Item::kInt) {
      if (it.tensor) {
        i = py::handle(o).attr("item")().cast<int64_t>();
      } else {
        as_int_index(o, &i);
      }
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

bool is_full_slice(PyObject* o) {
  if (!PySlice_Check(o)) return false;
  auto* s = reinterpret_cast<PySliceObject*>(o);
  return s->start == Py_None && s->stop == Py_None && s->step == Py_None;
}

// The basic step of an advanced index, recorded by autograd when it applies;
// self itself when the step keeps every dim whole.
py::object basic_step(py::handle self, const py::tuple& basic) {
  bool trivial = true;
  for (py::handle h : basic)
    trivial = trivial && (h.ptr() == Py_Ellipsis || is_full_slice(h.ptr()));
  if (trivial) return py::reinterpret_borrow<py::object>(self);
  Tensor t = py::cast<Tensor>(self);
  if (FLB_UNLIKELY(autograd_slot::wants_tensors(t)))
    return autograd_slot::call("__getitem__", self, py::make_tuple(basic), py::dict());
  bool advanced;
  return py::cast(basic_index(t, classify(basic.ptr(), &advanced)));
}

// Indexing with or into a Tensor subclass that overrides __torch_function__, or under a
// TorchFunctionMode.
bool index_wants_torch_function(std::initializer_list<py::handle> objects) {
  if (FLB_LIKELY(!torch_function::g_any_override && torch_function::t_modes == 0)) return false;
  if (torch_function::mode_active()) return true;
  if (torch_function::t_disabled || torch_function::t_all_disabled) return false;
  for (py::handle h : objects) {
    if (torch_function::overrides(h.ptr())) return true;
    if (PyTuple_Check(h.ptr()))
      for (py::handle item : py::reinterpret_borrow<py::tuple>(h))
        if (torch_function::overrides(item.ptr())) return true;
  }
  return false;
}

// Whether an index is ints alone (x[1], x[1, 2]): PyTorch's profile shows aten::select.
bool only_ints(PyObject* index) {
  if (PyLong_Check(index)) return true;
  if (!PyTuple_Check(index)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i)
    if (!PyLong_Check(PyTuple_GET_ITEM(index, i))) return false;
  return true;
}

// PyTorch's (and old NumPy's) reading of a short list index: a non-tuple sequence of
// fewer than 32 items holding a tensor, a sequence, a slice, None or Ellipsis indexes as
// the tuple of its items (x[[slice(None), 0]] is x[:, 0]; x[[[0, 1], [1, 0]]] picks two
// elements), with PyTorch's deprecation warning; any other index is returned as it is.
py::object as_index(py::handle index) {
  PyObject* o = index.ptr();
  if (PyTuple_Check(o) || is_tensor(o) || !PySequence_Check(o) || PyUnicode_Check(o) ||
      PyBytes_Check(o) || PyByteArray_Check(o) || is_ndarray(o))
    return py::reinterpret_borrow<py::object>(index);
  Py_ssize_t n = PySequence_Size(o);
  if (n < 0) PyErr_Clear();
  if (n <= 0 || n >= 32) return py::reinterpret_borrow<py::object>(index);
  py::tuple items(n);
  bool multidim = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_GetItem(o, i);
    if (!item) {
      PyErr_Clear();
      return py::reinterpret_borrow<py::object>(index);
    }
    items[i] = py::reinterpret_steal<py::object>(item);
    multidim = multidim || is_tensor(item) || PySlice_Check(item) || item == Py_None ||
               item == Py_Ellipsis ||
               (PySequence_Check(item) && !PyUnicode_Check(item) && !PyBytes_Check(item));
  }
  if (!multidim) return py::reinterpret_borrow<py::object>(index);
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                   "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                   "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                   "which will result either in an error or a different result",
                   1) < 0)
    throw py::error_already_set();
  return std::move(items);
}

py::object getitem(py::handle self, py::handle index_in) {
  py::object index = as_index(index_in);
  if (FLB_UNLIKELY(index_wants_torch_function({self, index})))
    return torch_function::call("__getitem__", true, self, py::make_tuple(index), py::dict());
  Tensor t = py::cast<Tensor>(self);
  bool advanced;
  std::vector<Item> items = classify(index.ptr(), &advanced);
  if (!advanced) {
    if (FLB_UNLIKELY(autograd_slot::wants_tensors(t)))
      return autograd_slot::call("__getitem__", self, py::make_tuple(index), py::dict());
    profiler::OpScope profiled(only_ints(index.ptr()) ? "aten::select" : "aten::slice",
                               {self.ptr()});
    return py::cast(mark_view(basic_index(t, items), t));
  }
  Split split = split_advanced(items, t->dim());
  py::object view = basic_step(self, split.basic);
  Tensor v = py::cast<Tensor>(view);
  if (FLB_UNLIKELY(autograd_slot::wants_tensors(v)))  // records the `index` operator
    return g_module.attr("index")(view, indices_to_py(split.indices));
  profiler::OpScope profiled("aten::index", {view.ptr()});
  return py::cast(ops::index(v, split.indices));
}

// A value's leading size-1 dims are dropped before it is broadcast to the
// destination, as PyTorch does: t[0] = v of shape (1, n) fills an (n,) row.
Tensor without_leading_ones(const Tensor& v) {
  size_t lead = 0;
  while (lead < v->sizes().size() && v->sizes()[lead] == 1) ++lead;
  if (lead == 0) return v;
  DimVector sizes(v->sizes()), strides(v->strides());
  for (size_t i = 0; i < lead; ++i) sizes.erase(0), strides.erase(0);
  return make_view(v, sizes, strides, v->offset());
}

void setitem(py::handle self, py::handle index_in, py::handle value) {
  py::object index = as_index(index_in);
  if (FLB_UNLIKELY(index_wants_torch_function({self, index, value}))) {
    torch_function::call("__setitem__", true, self, py::make_tuple(index, value), py::dict());
    return;
  }
  Tensor t = py::cast<Tensor>(self);
  Tensor v = is_tensor(value.ptr()) ? py::cast<Tensor>(value) : Tensor();
  if (FLB_UNLIKELY(autograd_slot::wants_tensors(t, v))) {
    autograd_slot::call("__setitem__", self, py::make_tuple(index, value), py::dict());
    return;
  }
  if (!v && !is_number(value.ptr())) {
    fail<TypeError>(
        "flambeau: can only assign a Tensor or a Python number to an indexed "
        "tensor, not ",
        Py_TYPE(value.ptr())->tp_name);
  }
  bool advanced;
  std::vector<Item> items = classify(index.ptr(), &advanced);
  if (!advanced) {
    profiler::OpScope profiled(v ? "aten::copy_" : "aten::fill_", {self.ptr(), value.ptr()});
    Tensor view = basic_index(t, items);
    if (v) {
      // As PyTorch's copy_to: a value of the view's own shape is copied as it is (so
      // x[1] = x[1] is a full overlap, allowed); for another, broadcast to the view,
      // leading 1-dims are dropped; a CPU 0-dim value fills the view with its number
      // (so it may overlap it: x[0:2] = x[0]).
      if (v->sizes() == view->sizes()) {
        ops::copy_(view, v, false);
      } else if (v->dim() == 0 && v->device().is_cpu()) {
        py::object number = value.attr("item")();
        ops::fill_(view, scalar_from_py(number.ptr(), "__setitem__", "value"));
      } else {
        ops::copy_(view, without_leading_ones(v), false);
      }
    } else {
      ops::fill_(view, scalar_from_py(value.ptr(), "__setitem__", "value"));
    }
    return;
  }
  profiler::OpScope profiled("aten::index_put_", {self.ptr(), value.ptr()});
  Split split = split_advanced(items, t->dim());
  bool unused;
  Tensor view = basic_index(t, classify(split.basic.ptr(), &unused));
  // Assignment converts the value to the destination's dtype.
  Tensor values =
      v ? to_dtype(without_leading_ones(v), view->dtype())
        : scalar_tensor(scalar_from_py(value.ptr(), "__setitem__", "value"), view->dtype());
  ops::index_put(view, split.indices, values, false, OutArg::self(view));
}

// nonzero(as_tuple=False) is the table's plain overload (the other returns a
// tuple), so a false as_tuple is dropped before the call.
py::object call_nonzero(const py::object& fn, const py::args& args, const py::kwargs& kwargs) {
  if (!kwargs.contains("as_tuple") || py::bool_(kwargs["as_tuple"])) return fn(*args, **kwargs);
  py::dict rest;
  for (auto kv : kwargs)
    if (!py::str(kv.first).equal(py::str("as_tuple"))) rest[kv.first] = kv.second;
  return fn(*args, **rest);
}

void bind_indexing(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
  // As PyTorch's: self.dim(), then the rows of self.unbind(0), each call through
  // __torch_function__ (which __iter__ itself does not take part in).
  cls.def("__iter__", [](py::handle self) {
    FLB_CHECK_T(TypeError, self.attr("dim")().cast<int64_t>() > 0, "iteration over a 0-d tensor");
    return py::iter(self.attr("unbind")(0));
  });
  g_module = py::reinterpret_borrow<py::object>(m);
  g_module.inc_ref();  // outlives the interpreter's teardown, like the parser's objects
  py::object fn = m.attr("nonzero");
  m.attr("nonzero") = py::cpp_function(
      [fn](py::args args, py::kwargs kwargs) { return call_nonzero(fn, args, kwargs); },
      py::name("nonzero"), py::doc(py::str(fn.attr("__doc__")).cast<std::string>().c_str()));
  py::object method = cls.attr("nonzero");
  py::setattr(cls, "nonzero",
              py::cpp_function(
                  [method](py::handle self, py::args args, py::kwargs kwargs) {
                    py::tuple full(args.size() + 1);
                    full[0] = self;
                    for (size_t i = 0; i < args.size(); ++i) full[i + 1] = args[i];
                    return call_nonzero(method, py::args(full), kwargs);
                  },
                  py::name("nonzero"), py::is_method(cls)));
}

}  // namespace

FLB_BINDINGS(20, bind_indexing);

}  // namespace flambeau::python
