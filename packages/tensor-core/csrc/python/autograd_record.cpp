#include "python/autograd_record.h"

#include <functional>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>

#include "dispatch/dispatcher.h"
#include "generated/ops_autograd.h"
#include "generated/ops_tensor.h"
#include "python/autograd_meta.h"
#include "python/autograd_native.h"
#include "python/autograd_node.h"
#include "python/autograd_saved.h"
#include "python/registry.h"

namespace flambeau::python::autograd_record {

namespace {

// What the autograd package hands over when it installs the fast path.
struct Package {
  PyTypeObject* node_type = nullptr;  // its FormulaNode class
  py::object grad_edge;               // grad_edge(t): for views, which may need rebasing
  py::object accumulate_node;         // accumulate_node(leaf)
  py::object view_info;               // ViewInfo(base, view)
  py::object modified_error;          // modified_error(op, t, now, then) -> exception
  py::object reshaped_error;          // reshaped_error(op, t) -> exception
  py::object tensor_meta;             // tensor_meta(shape, dtype, device): an argument not kept
};

Package& package() {
  static auto* p = new Package();  // leaked: outlives interpreter teardown
  return *p;
}

std::unordered_map<std::string, Plan>& plans() {
  static auto* m = new std::unordered_map<std::string, Plan>();
  return *m;
}

uint64_t g_generation = 0;
bool g_enabled = true;
thread_local bool t_anomaly = false;

struct Names {
  PyObject *result, *results;
};

const Names& names() {
  static const Names n{PyUnicode_InternFromString("result"), PyUnicode_InternFromString("results")};
  return n;
}

// o is a Tensor (the callers checked): read without pybind11's cast.
Tensor as_tensor(PyObject* o) { return Tensor(autograd_meta::impl_of(o)); }

bool differentiable(const Tensor& t) { return is_floating(t->dtype()) || is_complex(t->dtype()); }

// The (node, output_nr) edge a gradient for tensor o flows into.
py::object edge_of(PyObject* o) {
  TensorImpl* t = autograd_meta::impl_of(o);
  if (!t->requires_grad()) return py::make_tuple(py::none(), 0);
  if (const autograd_meta::TensorAutograd* m = autograd_meta::find(*t)) {
    if (m->view) return package().grad_edge(py::handle(o));  // it may need rebasing
    if (m->grad_fn) return py::make_tuple(m->grad_fn, m->output_nr);
    if (m->accumulate) return py::make_tuple(m->accumulate, 0);
  }
  return py::make_tuple(package().accumulate_node(py::handle(o)), 0);
}

void attach(TensorImpl& t, PyObject* node, Py_ssize_t output_nr) {
  t.set_requires_grad(true);
  autograd_meta::TensorAutograd& m = autograd_meta::get_or_create(t);
  m.grad_fn = py::reinterpret_borrow<py::object>(node);
  m.output_nr = output_nr;
}

// The backward of a call whose tensor arguments are the bits of mask, with tensor lists
// of the given lengths.
const py::object& formula_for(const Plan& plan, uint32_t mask, bool tuple_output,
                              const std::vector<int64_t>& lengths) {
  std::vector<int64_t> key{static_cast<int64_t>(mask | (tuple_output ? 1u << 31 : 0u))};
  key.insert(key.end(), lengths.begin(), lengths.end());
  for (const auto& [k, f] : plan.formulas)
    if (k == key) return f;
  py::tuple lens(lengths.size());
  for (size_t k = 0; k < lengths.size(); ++k) lens[k] = py::int_(lengths[k]);
  plan.formulas.emplace_back(std::move(key), plan.formula_for(mask, tuple_output, lens));
  return plan.formulas.back().second;
}

// Whether argument i is a tensor list given as a list or a tuple (not None).
bool is_list(const Plan& plan, int i, PyObject* arg) {
  return (plan.lists >> i & 1) && (PyList_Check(arg) || PyTuple_Check(arg));
}

// The arguments a call keeps for its formula (bit i: argument i), given which are tensors
// and which of those require grad.
uint32_t keep_mask(const Plan& plan, uint32_t tensors, uint32_t grads) {
  if (plan.keep_for.is_none() || package().tensor_meta.is_none()) return ~0u;
  const uint64_t key = (uint64_t{tensors} << 32) | grads;
  for (const auto& [k, keep] : plan.keeps)
    if (k == key) return keep;
  const auto keep = plan.keep_for(tensors, grads).cast<uint32_t>();
  plan.keeps.emplace_back(key, keep);
  return keep;
}

struct SavedCall {
  PyObject_HEAD SavedData data;
};

PyTypeObject* saved_call_type = nullptr;

int saved_traverse(PyObject* self, visitproc visit, void* arg) {
  auto& d = reinterpret_cast<SavedCall*>(self)->data;
  for (int i = 0; d.plan && i < d.plan->n_params; ++i) Py_VISIT(d.args[i]);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int saved_clear(PyObject* self) {
  auto& d = reinterpret_cast<SavedCall*>(self)->data;
  for (auto& a : d.args) Py_CLEAR(a);
  return 0;
}

void saved_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  saved_clear(self);
  reinterpret_cast<SavedCall*>(self)->data.~SavedData();
  type->tp_free(self);
  Py_DECREF(type);
}

[[noreturn]] void raise_modified(PyObject* op, py::handle t, uint64_t now, uint64_t then) {
  py::object e = package().modified_error(py::handle(op), t, now, then);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e.ptr())), e.ptr());
  throw py::error_already_set();
}

// A recorded input's sizes, strides or dtype changed since the call (t_, squeeze_,
// set_, resize_, `.data =`): the formula would read the new geometry.
[[noreturn]] void raise_reshaped(PyObject* op, PyObject* t) {
  if (package().reshaped_error.is_none()) {
    PyErr_Format(PyExc_RuntimeError,
                 "a tensor used by %S had its shape, strides or dtype changed in place after "
                 "the call, and its backward reads that geometry",
                 op);
    throw py::error_already_set();
  }
  py::object e = package().reshaped_error(py::handle(op), py::handle(t));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e.ptr())), e.ptr());
  throw py::error_already_set();
}

// unpack(op, node) -> {param: value, ..., "result": ..., "results": (...)}, after
// checking that nothing it reads was modified in place since the call.
py::object unpack(SavedData& d, PyObject* op, PyObject* node) {
  const Plan& plan = *d.plan;
  check_saved(d, op);
  py::dict args;
  for (int i = 0; i < plan.n_params; ++i) {
    py::object value = py::reinterpret_borrow<py::object>(d.args[i]);
    if (const ArgMeta* m = d.dropped_meta(i)) value = meta_object(*m);
    if (PyDict_SetItem(args.ptr(), plan.param_names[i].ptr(), value.ptr()) < 0)
      throw py::error_already_set();
  }
  py::tuple results(d.outputs.size());
  for (size_t j = 0; j < d.outputs.size(); ++j) {
    const SavedOutput& o = d.outputs[j];
    if (!o.tensor) {
      results[j] = o.value;
      continue;
    }
    py::object out = py::cast(ops::detach(o.tensor));
    uint64_t now = o.tensor->version();
    const bool reads = j < 64 && (plan.check_outputs >> j & 1);
    if (reads && now != o.version) raise_modified(op, out, now, o.version);
    if (grad_enabled() && differentiable(o.tensor))  // create_graph: reconnect to the node
      attach(*autograd_meta::impl_of(out.ptr()), node, static_cast<Py_ssize_t>(j));
    results[j] = out;
  }
  args[names().result] =
      d.tuple_output || results.empty() ? py::object(results) : py::object(results[0]);
  args[names().results] = results;
  return std::move(args);
}

PyObject* saved_unpack(PyObject* self, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 2) {
    PyErr_SetString(PyExc_TypeError, "unpack(op, node) takes two arguments");
    return nullptr;
  }
  try {
    return unpack(reinterpret_cast<SavedCall*>(self)->data, argv[0], argv[1]).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyMethodDef saved_methods[] = {
    {"unpack", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(saved_unpack)),
     METH_FASTCALL, "unpack(op, node) -> the recorded call's arguments and results"},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject* make_saved_call_type() {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(saved_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(saved_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(saved_clear)},
      {Py_tp_methods, saved_methods},
      {0, nullptr},
  };
  static PyType_Spec spec = {"flambeau._C._SavedCall", sizeof(SavedCall), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
  return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

py::object new_saved_call(const Plan& plan, PyObject* const* args, uint32_t keep) {
  if (!inference_mode_enabled()) {
    for (int i = 0; i < plan.n_params; ++i)
      if ((keep >> i & 1) && is_tensor(args[i]) && as_tensor(args[i])->is_inference())
        fail_inference_saved();
  }
  PyObject* self = saved_call_type->tp_alloc(saved_call_type, 0);
  if (!self) throw py::error_already_set();
  auto& d = reinterpret_cast<SavedCall*>(self)->data;
  new (&d) SavedData();
  d.plan = &plan;
  for (int i = 0; i < plan.n_params; ++i) {
    const bool tensor = is_tensor(args[i]);
    if (tensor) d.tensors |= 1u << i;
    if (tensor && !(keep >> i & 1)) {  // the formula reads its geometry only
      Tensor t = as_tensor(args[i]);
      d.dropped.push_back(ArgMeta{i, DimVector(t->sizes()), t->dtype(), t->device()});
      Py_INCREF(Py_None);
      d.args[i] = Py_None;
      continue;
    }
    if (is_list(plan, i, args[i])) {  // kept whole, frozen: later edits of the list don't count
      d.args[i] = PySequence_Tuple(args[i]);
      if (!d.args[i]) {
        Py_DECREF(self);
        throw py::error_already_set();
      }
      for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(d.args[i]); ++j)
        d.list_geometry.push_back(as_tensor(PyTuple_GET_ITEM(d.args[i], j))->metadata_version());
      continue;
    }
    Py_INCREF(args[i]);
    d.args[i] = args[i];
    if (!tensor) continue;
    Tensor t = as_tensor(args[i]);
    d.geometry[i] = t->metadata_version();
    if (plan.check_inputs) {
      d.versions[i] = t->version();
      d.checked |= 1u << i;
    }
  }
  return py::reinterpret_steal<py::object>(self);
}

}  // namespace

SavedData* saved_data(PyObject* o) {
  return Py_TYPE(o) == saved_call_type ? &reinterpret_cast<SavedCall*>(o)->data : nullptr;
}

void check_saved(const SavedData& d, PyObject* op) {
  const Plan& plan = *d.plan;
  for (int i = 0; i < plan.n_params; ++i) {
    if (!(d.checked >> i & 1)) continue;
    uint64_t now = as_tensor(d.args[i])->version();
    if (now != d.versions[i]) raise_modified(op, d.args[i], now, d.versions[i]);
  }
  // Every formula reads its tensor inputs' shapes (to undo broadcasting, at least).
  size_t listed = 0;
  for (int i = 0; i < plan.n_params; ++i) {
    if (is_tensor(d.args[i]) && as_tensor(d.args[i])->metadata_version() != d.geometry[i])
      raise_reshaped(op, d.args[i]);
    if (!(plan.lists >> i & 1) || !PyTuple_Check(d.args[i])) continue;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(d.args[i]); ++j) {
      PyObject* t = PyTuple_GET_ITEM(d.args[i], j);
      if (as_tensor(t)->metadata_version() != d.list_geometry[listed++]) raise_reshaped(op, t);
    }
  }
}

py::object meta_object(const ArgMeta& m) {
  py::tuple shape(m.sizes.size());
  for (size_t k = 0; k < m.sizes.size(); ++k) shape[k] = py::int_(m.sizes[k]);
  return package().tensor_meta(shape, py::reinterpret_borrow<py::object>(dtype_object(m.dtype)),
                               py::cast(m.device));
}

const Plan* PlanSlot::get() const {
  if (generation_ != g_generation) {
    auto it = plans().find(key_);
    plan_ = it == plans().end() ? nullptr : &it->second;
    generation_ = g_generation;
  }
  return plan_;
}

bool enabled() { return g_enabled && !t_anomaly && package().node_type != nullptr; }

bool recordable(const Plan& plan, PyObject* const* args) {
  for (int i = 0; plan.lists && i < plan.n_params; ++i) {
    if (!(plan.lists >> i & 1) || args[i] == Py_None) continue;
    if (!PyList_Check(args[i]) && !PyTuple_Check(args[i])) return false;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(args[i]);
    PyObject** items = PySequence_Fast_ITEMS(args[i]);
    for (Py_ssize_t j = 0; j < n; ++j)
      if (!is_tensor(items[j])) return false;
  }
  return true;
}

namespace {

// The edges of a call's tensor arguments (one per element of a tensor list), in order,
// and which arguments are tensors (mask) and require grad (grads).
struct Edges {
  uint32_t mask = 0, grads = 0;
  py::tuple next;
  std::vector<int64_t> lengths;  // of the tensor lists, in parameter order
};

Edges edges_of(const Plan& plan, PyObject* const* args) {
  Edges e;
  std::vector<py::object> edges;
  edges.reserve(static_cast<size_t>(plan.n_params));
  for (int i = 0; i < plan.n_params; ++i) {
    if (is_list(plan, i, args[i])) {  // one edge per element (recordable() checked them)
      e.mask |= 1u << i;
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(args[i]);
      PyObject** items = PySequence_Fast_ITEMS(args[i]);
      for (Py_ssize_t j = 0; j < n; ++j) edges.push_back(edge_of(items[j]));
      e.lengths.push_back(n);
      continue;
    }
    if (!is_tensor(args[i]) || (plan.nondiff >> i & 1)) continue;
    e.mask |= 1u << i;
    if (as_tensor(args[i])->requires_grad()) e.grads |= 1u << i;
    edges.push_back(edge_of(args[i]));
  }
  e.next = py::tuple(edges.size());
  for (size_t k = 0; k < edges.size(); ++k)
    PyTuple_SET_ITEM(e.next.ptr(), static_cast<Py_ssize_t>(k), edges[k].release().ptr());
  return e;
}

// What the call keeps for its formula: decided over the plain tensor arguments; lists
// count as non-tensors and are kept (the Python recorder's rule).
uint32_t kept_args(const Plan& plan, const Edges& e) {
  return keep_mask(plan, e.mask & ~plan.lists, e.grads) | plan.lists;
}

// The call's outputs, aliased with their versions now, for the formula.
void save_outputs(const Plan& plan, SavedData& data, PyObject* const* outputs, Py_ssize_t n_out) {
  // A native formula reads no output it does not declare (the Python path's formulas
  // get every output as "result").
  const bool keep = !plan.native || plan.check_outputs != 0;
  data.outputs.resize(keep ? n_out : 0);
  for (Py_ssize_t j = 0; keep && j < n_out; ++j) {
    PyObject* o = outputs[j];
    if (is_tensor(o)) {
      Tensor t = as_tensor(o);
      data.outputs[j].tensor = make_view(t, t->sizes(), t->strides(), t->offset());
      data.outputs[j].version = data.outputs[j].tensor->version();
    } else {
      data.outputs[j].value = py::reinterpret_borrow<py::object>(o);
    }
  }
}

// A new node of the package's class for the call.
py::object new_node(const Plan& plan, const Edges& e, bool tuple_output, const py::object& saved,
                    Py_ssize_t n_out) {
  PyTypeObject* type = package().node_type;  // a subclass of _C._Node (checked at install)
  auto node = py::reinterpret_steal<py::object>(type->tp_alloc(type, 0));
  if (!node) throw py::error_already_set();
  auto* fields = reinterpret_cast<autograd_node::NodeObject*>(node.ptr());
  autograd_node::set_field(fields->name, plan.node_name.ptr());
  autograd_node::set_field(fields->next_functions, e.next.ptr());
  autograd_node::set_field(fields->formula,
                           formula_for(plan, e.mask, tuple_output, e.lengths).ptr());
  autograd_node::set_field(fields->saved, saved.ptr());
  fields->n_outputs = n_out;
  fields->sequence_nr = autograd_node::next_sequence_nr();
  return node;
}

}  // namespace

py::object record(const Plan& plan, PyObject* const* args, py::object result) {
  if (plan.formula_for.is_none()) return result;  // nothing differentiable comes out
  PyObject* r = result.ptr();
  bool tuple_output = PyTuple_Check(r);
  Py_ssize_t n_out = tuple_output ? PyTuple_GET_SIZE(r) : 1;
  PyObject* const* outputs = tuple_output ? &PyTuple_GET_ITEM(r, 0) : &r;
  bool any_differentiable = false;
  for (Py_ssize_t j = 0; j < n_out; ++j) {
    PyObject* o = outputs[j];
    if (!is_tensor(o)) continue;
    // The op handed back an input (x.to(x.dtype)): it already carries its graph.
    for (int i = 0; i < plan.n_params; ++i)
      if (args[i] == o) return result;
    any_differentiable = any_differentiable || differentiable(as_tensor(o));
  }
  if (!any_differentiable) return result;

  const Edges e = edges_of(plan, args);
  if (plan.nondiff && e.grads == 0) return result;  // only a shape-lending argument did
  py::object saved = new_saved_call(plan, args, kept_args(plan, e));
  auto& data = reinterpret_cast<SavedCall*>(saved.ptr())->data;
  data.tuple_output = tuple_output;
  save_outputs(plan, data, outputs, n_out);
  py::object node = new_node(plan, e, tuple_output, saved, n_out);
  for (Py_ssize_t j = 0; j < n_out; ++j) {
    PyObject* o = outputs[j];
    if (!is_tensor(o) || !differentiable(as_tensor(o))) continue;
    TensorImpl& t = *autograd_meta::impl_of(o);
    attach(t, node.ptr(), j);
    // (reshape and flatten copy when they cannot view: the copy is not a view)
    if (plan.view && t.storage() == autograd_meta::impl_of(args[0])->storage())
      autograd_meta::get_or_create(t).view =
          package().view_info(py::handle(args[0]), py::handle(o));
  }
  return result;
}

bool inplace_recordable(const Plan& plan, PyObject* const* args) {
  if (plan.view || plan.lists || plan.nondiff || plan.formula_for.is_none() || !is_tensor(args[0]))
    return false;
  const TensorImpl& t = *autograd_meta::impl_of(args[0]);
  const autograd_meta::TensorAutograd* m = autograd_meta::find(t);
  if (m && m->view) return false;  // CopySlices rebases the view's root: Python's
  // A leaf that requires grad: the Python recorder raises PyTorch's error.
  return !t.requires_grad() || (m && m->grad_fn);
}

void record_inplace(const Plan& plan, PyObject* const* call_args,
                    const std::function<void()>& run) {
  PyObject* target = call_args[0];
  TensorImpl& t = *autograd_meta::impl_of(target);
  // Edges from the arguments as they are before the call; the target is re-rooted onto
  // the node recorded here.
  const Edges e = edges_of(plan, call_args);
  const uint32_t keep = kept_args(plan, e);
  PyObject* args[kMaxParams];
  for (int i = 0; i < plan.n_params; ++i) args[i] = call_args[i];
  py::object old;
  if (plan.check_inputs && (keep & 1)) {
    // The formula reads the target's value from before the call: a copy stands for it,
    // in the graph too (attached where the target's history ends, for double backward).
    old = py::cast(ops::clone(ops::detach(Tensor(&t)), MemoryFormat::Preserve));
    if (const autograd_meta::TensorAutograd* m = autograd_meta::find(t); m && m->grad_fn)
      attach(*autograd_meta::impl_of(old.ptr()), m->grad_fn.ptr(), m->output_nr);
    args[0] = old.ptr();
  }
  py::object saved = new_saved_call(plan, args, keep);  // the versions before the call
  run();
  if (!differentiable(Tensor(&t))) return;
  save_outputs(plan, reinterpret_cast<SavedCall*>(saved.ptr())->data, &target, 1);
  attach(t, new_node(plan, e, false, saved, 1).ptr(), 0);
}

void register_bindings(py::module_& m, py::object /*tensor_class*/) {
  saved_call_type = make_saved_call_type();
  if (!saved_call_type) throw py::error_already_set();
  m.add_object("_SavedCall",
               py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(saved_call_type)));
  m.def(
      "_autograd_fast_install",
      [](py::object node_type, py::object grad_edge, py::object accumulate_node,
         py::object view_info, py::object modified_error, py::object reshaped_error,
         py::object tensor_meta) {
        if (!PyType_Check(node_type.ptr()) ||
            !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(node_type.ptr()),
                              autograd_node::g_node_type))
          throw py::type_error("node_type must be a subclass of flambeau._C._Node");
        Package& p = package();
        p.node_type = reinterpret_cast<PyTypeObject*>(node_type.release().ptr());
        p.grad_edge = std::move(grad_edge);
        p.accumulate_node = std::move(accumulate_node);
        p.view_info = std::move(view_info);
        p.modified_error = std::move(modified_error);
        p.reshaped_error = std::move(reshaped_error);
        p.tensor_meta = std::move(tensor_meta);
      },
      py::arg("node_type"), py::arg("grad_edge"), py::arg("accumulate_node"), py::arg("view_info"),
      py::arg("modified_error"), py::arg("reshaped_error") = py::none(),
      py::arg("tensor_meta") = py::none(),
      "Install the autograd package's hooks for recording in C++ (see autograd_record.h).");
  m.def(
      "_autograd_register_plan",
      [](const std::string& key, py::object node_name, py::tuple param_names, py::tuple defaults,
         bool check_inputs, uint64_t check_outputs, bool view, py::object formula_for,
         py::object keep_for, py::object native, uint32_t lists, uint32_t nondiff) {
        if (defaults.size() != param_names.size())
          throw py::value_error("_autograd_register_plan: bad parameter list for " + key);
        if (param_names.size() > static_cast<size_t>(kMaxParams))
          return false;  // Python records it
        Plan plan;
        plan.node_name = std::move(node_name);
        plan.param_names = std::move(param_names);
        plan.defaults = std::move(defaults);
        plan.n_params = static_cast<int>(plan.param_names.size());
        plan.check_inputs = check_inputs;
        plan.check_outputs = check_outputs;
        plan.view = view;
        plan.lists = lists;
        plan.nondiff = nondiff;
        plan.formula_for = std::move(formula_for);
        plan.keep_for = std::move(keep_for);
        if (!native.is_none()) {
          const autograd_native::Formula& f = autograd_native::formula_of(native);
          for (const char* name : f.params) {
            int at = -1;
            for (int i = 0; i < plan.n_params; ++i)
              if (plan.param_names[i].cast<std::string>() == name) at = i;
            if (at < 0)
              throw py::value_error(std::string("the native formula of ") + f.name +
                                    " reads parameter " + name + ", which " + key + " lacks");
            plan.native_params.push_back(at);
          }
          plan.native = std::move(native);
        }
        plans()[key] = std::move(plan);
        ++g_generation;
        return true;
      },
      py::arg("key"), py::arg("node_name"), py::arg("param_names"), py::arg("defaults"),
      py::arg("check_inputs"), py::arg("check_outputs"), py::arg("view"), py::arg("formula_for"),
      py::arg("keep_for") = py::none(), py::arg("native") = py::none(), py::arg("lists") = 0,
      py::arg("nondiff") = 0,
      "Register how calls to an operator overload are recorded in C++; False when it has too "
      "many parameters to be (its calls then go to the Python recorder).");
  m.def(
      "_autograd_fast_set_enabled",
      [](bool on) {
        bool was = g_enabled;
        g_enabled = on;
        return was;
      },
      "Turn recording in C++ on or off (for tests and benchmarks); returns the previous state.");
  m.def(
      "_autograd_set_anomaly", [](bool on) { t_anomaly = on; },
      "Anomaly detection in this thread: nodes are then recorded by the Python recorder.");
}

FLB_BINDINGS(60, register_bindings);

}  // namespace flambeau::python::autograd_record
