// The backward engine's loop (docs/design/autograd-engine-in-cpp.rst, step 2). The
// autograd package owns the graph's meaning: its node classes, hooks and errors;
// this file walks its nodes in dependency order, sums the gradients each receives
// and runs each once. Nodes recorded in C++ whose formula is native
// (autograd_native.h) run without a Python frame; every other node runs its Python
// _backward. The package's engine.run_backward prepares a pass (root gradients,
// inputs=, its GraphTask) and calls execute().
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "python/autograd_native.h"
#include "python/autograd_node.h"
#include "python/autograd_saved.h"
#include "python/profiler.h"
#include "python/registry.h"

namespace flambeau::python::autograd_engine {

namespace {

namespace py = pybind11;

// What the autograd package installs (engine.py): its node classes and the Python
// pieces of a node's run that hooks and anomaly mode need.
struct Package {
  PyTypeObject* accumulate_type = nullptr;  // AccumulateGrad
  PyTypeObject* formula_type = nullptr;     // FormulaNode
  py::object accumulate;  // accumulate(node, grad, create_graph, owned): into the leaf's .grad
  py::object before;      // before(node, grads, runs, create_graph) -> grads: tensor
                          // hooks, pre-hooks, retain_grad
  py::object after;       // after(node, input_grads, grads) -> input_grads: node hooks
  py::object check_nan;   // check_nan(node, input_grads) (anomaly mode)
};

Package& package() {
  static auto* p = new Package();  // leaked: outlives interpreter teardown
  return *p;
}

struct Names {
  PyObject *backward, *release;
};

const Names& names() {
  static const Names n{PyUnicode_InternFromString("_backward"),
                       PyUnicode_InternFromString("_release")};
  return n;
}

py::object checked(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

// Every node derives from _C._Node; its typed fields are read directly.
autograd_node::NodeObject& fields_of(PyObject* node) {
  autograd_node::NodeObject* n = autograd_node::as_node(node);
  if (!n) {
    PyErr_Format(PyExc_TypeError, "the autograd graph holds %R, which is not a graph node", node);
    throw py::error_already_set();
  }
  return *n;
}

// Whether this reference to gradient g is the only one to it and to its memory: the
// leaf may then keep g itself as its .grad (no copy), as PyTorch's AccumulateGrad does.
// A view (linear's weight gradient: the transposed product TBackward hands on) keeps
// its base alive and shares its memory; it is still the only way to that memory when
// nothing but the view holds the base.
bool sole_reference(const py::object& g) {
  if (Py_REFCNT(g.ptr()) != 1 || !is_tensor(g.ptr())) return false;
  Tensor t = g.cast<Tensor>();  // a second reference to the tensor, for this check
  if (t->use_count() != 2 || !t->storage()) return false;
  const TensorImpl* base = t->view_base();
  if (base && base->use_count() != 1) return false;
  return t->storage()->use_count() == (base ? 2 : 1);
}

// A node of this pass: the edges it leads to, the gradients its outputs received,
// and how many of its consumers have still to deliver theirs.
struct State {
  py::object node;
  py::tuple next;                 // next_functions
  std::vector<py::object> grads;  // by output; empty until a gradient arrives
  int dependencies = 0;
  Py_ssize_t n_outputs = 0;
};

class Pass {
 public:
  Pass(py::object target_nodes, py::object targets, py::list captured, bool capture,
       bool create_graph, bool retain_graph, bool check_nan)
      : pruned_(!target_nodes.is_none()),
        target_nodes_(std::move(target_nodes)),
        targets_(std::move(targets)),
        captured_(std::move(captured)),
        capture_(capture),
        create_graph_(create_graph),
        retain_graph_(retain_graph),
        check_nan_(check_nan) {}

  void run(const py::list& root_nodes, const py::list& root_nrs, const py::list& root_grads) {
    const std::vector<PyObject*> roots = walk(root_nodes);
    for (size_t k = 0; k < root_nodes.size(); ++k)
      deliver(state(root_nodes[k].ptr()), root_nrs[k].cast<Py_ssize_t>(), root_grads[k]);
    for (PyObject* n : roots)
      if (states_[n].dependencies == 0 && is_needed(n)) make_ready(n);
    while (!ready_.empty()) {
      PyObject* node = ready_.top().node;
      ready_.pop();
      step(states_[node]);
    }
  }

  // The nodes a pass from these roots may run (GraphTask.nodes): every node reachable,
  // or with inputs= those that lead to a target.
  py::set nodes(const py::list& root_nodes) {
    walk(root_nodes);
    py::set out;
    for (const auto& [node, s] : states_)
      if (is_needed(node)) out.add(s.node);
    return out;
  }

 private:
  // Enters the roots (once each: two outputs of one node make one root), counts every
  // reachable node's consumers and, with inputs=, finds the nodes that lead to a target.
  std::vector<PyObject*> walk(const py::list& root_nodes) {
    std::vector<PyObject*> roots;
    for (py::handle n : root_nodes) {
      if (states_.count(n.ptr())) continue;
      state(n.ptr());
      roots.push_back(n.ptr());
    }
    count_dependencies(roots);
    if (pruned_) find_needed(roots);
    return roots;
  }

  State& state(PyObject* node) {
    auto [it, fresh] = states_.try_emplace(node);
    if (fresh) {
      State& s = it->second;
      s.node = py::reinterpret_borrow<py::object>(node);
      const autograd_node::NodeObject& f = fields_of(node);
      py::object next =
          py::reinterpret_borrow<py::object>(f.next_functions ? f.next_functions : Py_None);
      if (!PyTuple_Check(next.ptr())) next = py::tuple(next.is_none() ? py::tuple() : next);
      s.next = py::reinterpret_steal<py::tuple>(next.release());
      s.n_outputs = f.n_outputs;
    }
    return it->second;
  }

  void count_dependencies(const std::vector<PyObject*>& roots) {
    std::vector<PyObject*> stack(roots);
    std::unordered_set<PyObject*> entered(roots.begin(), roots.end());
    while (!stack.empty()) {
      // (states_ is an unordered_map: a State stays where it is while others are added)
      const py::tuple& next = state(stack.back()).next;
      stack.pop_back();
      for (py::handle edge : next) {
        PyObject* nxt = PyTuple_GET_ITEM(edge.ptr(), 0);
        if (nxt == Py_None) continue;
        state(nxt).dependencies += 1;
        if (entered.insert(nxt).second) stack.push_back(nxt);
      }
    }
  }

  // With inputs= given, the nodes from which a target can be reached (the targets
  // included): only they run, as in PyTorch. A post-order walk: a node after every
  // node its edges lead to.
  void find_needed(const std::vector<PyObject*>& roots) {
    std::vector<std::pair<PyObject*, Py_ssize_t>> stack;  // (node, next edge to visit)
    std::unordered_set<PyObject*> entered;
    for (PyObject* root : roots) {
      if (!entered.insert(root).second) continue;
      stack.emplace_back(root, 0);
      while (!stack.empty()) {
        auto& [node, edge] = stack.back();
        const py::tuple& next = states_.at(node).next;
        if (edge < PyTuple_GET_SIZE(next.ptr())) {
          // (no side effect inside the macros: with assertions on, CPython's
          // PyTuple_GET_ITEM evaluates its argument twice)
          PyObject* pair = PyTuple_GET_ITEM(next.ptr(), edge);
          ++edge;
          PyObject* nxt = PyTuple_GET_ITEM(pair, 0);
          if (nxt != Py_None && entered.insert(nxt).second) stack.emplace_back(nxt, 0);
          continue;
        }
        PyObject* done = node;
        stack.pop_back();
        bool needed = is_target(done);
        for (py::handle e : states_.at(done).next) {
          PyObject* nxt = PyTuple_GET_ITEM(e.ptr(), 0);
          needed = needed || (nxt != Py_None && needed_.count(nxt));
        }
        if (needed) needed_.insert(done);
      }
    }
  }

  bool is_needed(PyObject* node) const { return !pruned_ || needed_.count(node) != 0; }

  // A gradient for output nr of the node behind s: summed with what it has.
  void deliver(State& s, Py_ssize_t nr, py::handle g) {
    if (g.is_none()) return;
    if (s.grads.empty()) s.grads.resize(static_cast<size_t>(s.n_outputs));
    py::object& slot = s.grads.at(static_cast<size_t>(nr));
    if (!slot) {
      slot = py::reinterpret_borrow<py::object>(g);
      return;
    }
    // A sparse gradient (Embedding(sparse=True)) meeting a dense one for the same tensor
    // sums to a dense one; only dense + sparse is defined, so the dense one goes first.
    const bool dense_first =
        Py_TYPE(slot.ptr()) != Py_TYPE(g.ptr()) && is_sparse(slot.ptr()) && !is_sparse(g.ptr());
    slot = dense_first ? checked(PyNumber_Add(g.ptr(), slot.ptr()))
                       : checked(PyNumber_Add(slot.ptr(), g.ptr()));
  }

  static bool is_sparse(PyObject* t) {
    const py::object flag = checked(PyObject_GetAttrString(t, "is_sparse"));
    return PyObject_IsTrue(flag.ptr()) == 1;
  }

  // Whether a node runs its formula. With inputs= given, only the part of the graph
  // that leads to another target does; a target reached only to capture its gradient
  // does not (tensor hooks and retain_grad apply, node hooks do not: PyTorch's rule).
  bool runs(const State& s, bool accumulate) const {
    if (!pruned_) return true;
    if (accumulate) return !capture_ && target_positions(s.node.ptr(), 0);
    for (py::handle edge : s.next) {
      PyObject* nxt = PyTuple_GET_ITEM(edge.ptr(), 0);
      if (nxt != Py_None && is_needed(nxt)) return true;
    }
    return false;
  }

  bool is_target(PyObject* node) const {
    if (!pruned_) return false;
    const int in = PySet_Contains(target_nodes_.ptr(), node);
    if (in < 0) throw py::error_already_set();
    return in == 1;
  }

  // The positions in inputs= of output nr of a target node (a borrowed list), or null.
  PyObject* target_positions(PyObject* node, Py_ssize_t nr) const {
    if (targets_.is_none() || !is_target(node)) return nullptr;
    py::object key = py::make_tuple(py::handle(node), nr);
    PyObject* positions = PyDict_GetItemWithError(targets_.ptr(), key.ptr());
    if (!positions && PyErr_Occurred()) throw py::error_already_set();
    return positions;
  }

  void step(State& s) {
    PyObject* node = s.node.ptr();
    const profiler::NodeScope evaluating(node, /*evaluate_function=*/true);
    const autograd_node::NodeObject& f = fields_of(node);
    std::vector<py::object> grads = std::move(s.grads);
    grads.resize(static_cast<size_t>(s.n_outputs));
    for (auto& g : grads)
      if (!g) g = py::none();
    const bool accumulate = Py_TYPE(node) == package().accumulate_type;
    const bool run = runs(s, accumulate);
    if (f.tensor_hooks || f.prehooks || f.retained) {  // null until something registers
      py::list in(grads.size());
      for (size_t i = 0; i < grads.size(); ++i) in[i] = grads[i];
      py::object out = package().before(s.node, in, run, create_graph_);
      grads.clear();
      for (py::handle g : out) grads.push_back(py::reinterpret_borrow<py::object>(g));
      grads.resize(static_cast<size_t>(s.n_outputs), py::none());
    }
    if (PyErr_Occurred()) throw py::error_already_set();
    capture(node, grads);
    if (accumulate) {
      if (!grads[0].is_none() && run && !capture_) {
        py::object g = std::move(grads[0]);
        const bool owned = !create_graph_ && sole_reference(g);
        package().accumulate(s.node, std::move(g), create_graph_, owned);
      }
      return;
    }
    if (!run) return;

    py::object input_grads;
    {
      const profiler::NodeScope applying(node, /*evaluate_function=*/false);
      input_grads = backward(s, grads);
    }
    if (f.hooks) {
      py::tuple g(grads.size());
      for (size_t i = 0; i < grads.size(); ++i) g[i] = grads[i];
      input_grads = package().after(s.node, input_grads, g);
    }
    if (check_nan_) package().check_nan(s.node, input_grads);
    if (!retain_graph_) release(node);
    py::object seq = checked(PySequence_Fast(input_grads.ptr(),
                                             "a node's backward must return a "
                                             "sequence of gradients"));
    const Py_ssize_t n_grads = PySequence_Fast_GET_SIZE(seq.ptr());
    const Py_ssize_t n_edges = PyTuple_GET_SIZE(s.next.ptr());
    for (Py_ssize_t e = 0; e < n_edges && e < n_grads; ++e) {
      PyObject* edge = PyTuple_GET_ITEM(s.next.ptr(), e);
      PyObject* nxt = PyTuple_GET_ITEM(edge, 0);
      if (nxt == Py_None || !is_needed(nxt)) continue;
      State& target = states_.at(nxt);
      deliver(target, PyLong_AsSsize_t(PyTuple_GET_ITEM(edge, 1)),
              PySequence_Fast_GET_ITEM(seq.ptr(), e));
      if (PyErr_Occurred()) throw py::error_already_set();
      if (--target.dependencies == 0) make_ready(nxt);
    }
  }

  void capture(PyObject* node, const std::vector<py::object>& grads) {
    if (!is_target(node)) return;
    for (size_t i = 0; i < grads.size(); ++i) {
      PyObject* positions = target_positions(node, static_cast<Py_ssize_t>(i));
      if (!positions) continue;
      for (py::handle pos : py::reinterpret_borrow<py::list>(positions)) captured_[pos] = grads[i];
    }
  }

  py::object backward(const State& s, const std::vector<py::object>& grads) {
    PyObject* node = s.node.ptr();
    bool any = false;
    for (const auto& g : grads) any = any || !g.is_none();
    if (!any) {
      py::tuple none(PyTuple_GET_SIZE(s.next.ptr()));
      for (size_t i = 0; i < none.size(); ++i) none[i] = py::none();
      return std::move(none);
    }
    if (Py_TYPE(node) == package().formula_type) {
      PyObject* saved = fields_of(node).saved;
      const autograd_record::SavedData* d = saved ? autograd_record::saved_data(saved) : nullptr;
      if (d && d->plan->native && grads.size() <= static_cast<size_t>(kMaxParams)) {
        autograd_record::check_saved(*d, d->plan->node_name.ptr());  // (the node's _name)
        PyObject* raw[kMaxParams];
        for (size_t i = 0; i < grads.size(); ++i) raw[i] = grads[i].ptr();
        return autograd_native::apply(*d->plan, *d, raw, static_cast<Py_ssize_t>(grads.size()),
                                      s.next.ptr());
      }
    }
    py::tuple g(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) g[i] = grads[i];
    return checked(PyObject_CallMethodOneArg(node, names().backward, g.ptr()));
  }

  void release(PyObject* node) {
    if (Py_TYPE(node) == package().formula_type) {  // FormulaNode._release, without a frame
      autograd_node::NodeObject& f = fields_of(node);
      f.released = 1;
      autograd_node::set_field(f.saved, Py_None);
      return;
    }
    checked(PyObject_CallMethodNoArgs(node, names().release));
  }

  bool pruned_;              // inputs= given: only nodes leading to a target run
  py::object target_nodes_;  // the targets' nodes (a set)
  std::unordered_set<PyObject*> needed_;
  py::object targets_;
  py::list captured_;
  bool capture_, create_graph_, retain_graph_, check_nan_;
  std::unordered_map<PyObject*, State> states_;
  // PyTorch's ready queue: the node created last runs first, an AccumulateGrad before
  // any other (so a leaf's hooks fire as soon as its gradient is complete); nodes of
  // one rank in the order they became ready.
  struct Ready {
    uint64_t rank;
    uint64_t order;  // later is lower
    PyObject* node;
    bool operator<(const Ready& o) const {
      return rank != o.rank ? rank < o.rank : order > o.order;
    }
  };
  void make_ready(PyObject* node) {
    uint64_t rank = 0;
    if (Py_TYPE(node) == package().accumulate_type)
      rank = UINT64_MAX;
    else if (const auto* n = autograd_node::as_node(node))
      rank = n->sequence_nr;
    ready_.push({rank, made_ready_++, node});
  }
  std::priority_queue<Ready> ready_;
  uint64_t made_ready_ = 0;
};

void register_bindings(py::module_& m, py::object /*tensor_class*/) {
  m.def(
      "_autograd_engine_install",
      [](py::object accumulate_type, py::object formula_type, py::object accumulate,
         py::object before, py::object after, py::object check_nan, py::object fit_gradient) {
        if (!PyType_Check(accumulate_type.ptr()) || !PyType_Check(formula_type.ptr()))
          throw py::type_error("_autograd_engine_install: node types must be classes");
        Package& p = package();
        p.accumulate_type = reinterpret_cast<PyTypeObject*>(accumulate_type.release().ptr());
        p.formula_type = reinterpret_cast<PyTypeObject*>(formula_type.release().ptr());
        p.accumulate = std::move(accumulate);
        p.before = std::move(before);
        p.after = std::move(after);
        p.check_nan = std::move(check_nan);
        autograd_native::set_fit_gradient(std::move(fit_gradient));
      },
      py::arg("accumulate_type"), py::arg("formula_type"), py::arg("accumulate"), py::arg("before"),
      py::arg("after"), py::arg("check_nan"), py::arg("fit_gradient"),
      "Install the autograd package's node classes and callbacks for the engine.");
  m.def(
      "_autograd_execute",
      [](py::list root_nodes, py::list root_nrs, py::list root_grads, py::object target_nodes,
         py::object targets, py::list captured, bool capture, bool create_graph, bool retain_graph,
         bool check_nan) {
        if (!package().formula_type)
          throw py::value_error("_autograd_execute: the autograd package is not installed");
        Pass(std::move(target_nodes), std::move(targets), std::move(captured), capture,
             create_graph, retain_graph, check_nan)
            .run(root_nodes, root_nrs, root_grads);
      },
      py::arg("root_nodes"), py::arg("root_nrs"), py::arg("root_grads"), py::arg("target_nodes"),
      py::arg("targets"), py::arg("captured"), py::arg("capture"), py::arg("create_graph"),
      py::arg("retain_graph"), py::arg("check_nan"),
      "Run one backward pass over the recorded graph (the autograd package's "
      "engine.run_backward prepares it).");
  m.def(
      "_autograd_graph_nodes",
      [](py::list root_nodes, py::object target_nodes) {
        return Pass(std::move(target_nodes), py::none(), py::list(), false, false, true, false)
            .nodes(root_nodes);
      },
      py::arg("root_nodes"), py::arg("target_nodes"),
      "The nodes a backward pass from root_nodes may run: every reachable one, or, given "
      "target_nodes (inputs=), those from which a target can be reached.");
}

FLB_BINDINGS(62, register_bindings);

}  // namespace

}  // namespace flambeau::python::autograd_engine
