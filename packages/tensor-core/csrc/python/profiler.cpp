// The operator profiler's recorder and its _C functions (see profiler.h).
#include "python/profiler.h"

#include <pybind11/stl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/storage.h"
#include "python/arg_parser.h"
#include "python/registry.h"

namespace flambeau::python::profiler {

std::atomic<bool> g_active{false};

namespace {

// What a profile has recorded so far, and the record_function ranges still open. Events
// are appended under the lock by whichever thread finishes them.
struct Recorder {
  std::mutex lock;
  Config config;
  std::vector<Event> done;
  std::unordered_map<int64_t, std::unique_ptr<Event>> open_ranges;
  int64_t next_range = 1;
};

Recorder& recorder() {
  static auto* r = new Recorder();  // never destroyed: threads may record at exit
  return *r;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t native_thread_id() {
  static thread_local const int64_t id = static_cast<int64_t>(::syscall(SYS_gettid));
  return id;
}

int64_t bytes_in_use() { return cpu_allocator()->stats().allocated; }

// The Python frames of the calling thread, innermost first, as PyTorch writes them.
std::vector<std::string> python_stack() {
  std::vector<std::string> frames;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* fn = PyUnicode_AsUTF8(code->co_name);
    if (file && fn) {
      frames.push_back(std::string(file) + "(" + std::to_string(PyFrame_GetLineNumber(frame)) +
                       "): " + fn);
    } else {
      PyErr_Clear();
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  return frames;
}

std::vector<int64_t> shape_of(PyObject* o) {
  const IntList sizes = py::cast<Tensor>(py::handle(o))->sizes();
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

// A number's or an int list's value, as PyTorch's "Concrete Inputs" writes it ("2",
// "[1, 1]"); "" for anything else.
std::string concrete_value(PyObject* o) {
  if (!o || o == Py_None) return "";
  const bool number = PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o);
  const bool sequence = PyList_Check(o) || PyTuple_Check(o);
  if (!number && !sequence) return "";
  if (number) {
    PyObject* text = PyObject_Str(o);
    const char* s = text ? PyUnicode_AsUTF8(text) : nullptr;
    std::string out = s ? s : "";
    if (!s) PyErr_Clear();
    Py_XDECREF(text);
    return out;
  }
  std::string out = "[";
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(o, i);
    if (!PyLong_Check(item)) return "";
    const long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return "";
    }
    out += (i ? ", " : "") + std::to_string(v);
  }
  return out + "]";
}

void describe_argument(Event& e, PyObject* o) {
  if (o && is_tensor(o)) {
    e.shapes.push_back(shape_of(o));
    e.concrete.emplace_back();
  } else {
    e.shapes.emplace_back();
    e.concrete.push_back(concrete_value(o));
  }
}

Config current_config() {
  std::lock_guard<std::mutex> g(recorder().lock);
  return recorder().config;
}

}  // namespace

std::unique_ptr<Event> start_event(std::string name, EventKind kind) {
  return start_event(std::move(name), kind, current_config());
}

std::unique_ptr<Event> start_event(std::string name, EventKind kind, const Config& config) {
  auto e = std::make_unique<Event>();
  e->name = std::move(name);
  e->kind = kind;
  e->thread = native_thread_id();
  if (config.with_stack && PyGILState_Check()) e->stack = python_stack();
  if (config.profile_memory) e->memory_before = bytes_in_use();
  e->start_ns = now_ns();  // last, so the event's own bookkeeping is not timed
  return e;
}

void finish(std::unique_ptr<Event> event) {
  event->end_ns = now_ns();
  Recorder& r = recorder();
  std::lock_guard<std::mutex> g(r.lock);
  if (!active()) return;  // the profile stopped meanwhile
  if (r.config.profile_memory) event->memory_after = bytes_in_use();
  r.done.push_back(std::move(*event));
}

// The arguments are described before the clock starts (start_event reads it last).
void OpScope::begin_parsed(const char* name, const ParsedArgs& args) {
  const Config config = current_config();
  Event described;
  if (config.record_shapes && args.sig)
    for (size_t i = 0; i < args.sig->params().size(); ++i)
      describe_argument(described, args.slots[i]);
  event_ = start_event(name, EventKind::Operator, config);
  event_->shapes = std::move(described.shapes);
  event_->concrete = std::move(described.concrete);
}

void OpScope::begin_operands(const char* name, std::initializer_list<PyObject*> operands) {
  const Config config = current_config();
  Event described;
  if (config.record_shapes)
    for (PyObject* o : operands) describe_argument(described, o);
  event_ = start_event(name, EventKind::Operator, config);
  event_->shapes = std::move(described.shapes);
  event_->concrete = std::move(described.concrete);
}

NodeScope::NodeScope(PyObject* node, bool evaluate_function) {
  if (__builtin_expect(!active(), 1)) return;
  PyObject* name = PyObject_CallMethod(node, "name", nullptr);
  const char* text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  std::string node_name = text ? text : Py_TYPE(node)->tp_name;
  if (!text) PyErr_Clear();
  Py_XDECREF(name);
  event_ = start_event(
      evaluate_function ? "autograd::engine::evaluate_function: " + node_name : node_name,
      EventKind::BackwardNode);
}

namespace {

void start_profile(bool record_shapes, bool profile_memory, bool with_stack) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> g(r.lock);
  if (active())
    throw std::runtime_error(
        "the profiler is already running: stop the active profile before starting another");
  r.done.clear();
  r.open_ranges.clear();
  r.config = Config{record_shapes, profile_memory, with_stack};
  g_active.store(true);
}

void stop_profile() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> g(r.lock);
  g_active.store(false);
  r.open_ranges.clear();  // ranges still open when the profile ends are not recorded
}

py::list collect() {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> g(recorder().lock);
    events.swap(recorder().done);
  }
  py::list out;
  for (Event& e : events)
    out.append(py::make_tuple(e.name, static_cast<int>(e.kind), e.thread, e.start_ns, e.end_ns,
                              e.memory_after - e.memory_before, std::move(e.shapes),
                              std::move(e.concrete), std::move(e.stack)));
  return out;
}

int64_t range_begin(const std::string& name) {
  if (!active()) return 0;
  auto e = start_event(name, EventKind::UserRange);
  Recorder& r = recorder();
  std::lock_guard<std::mutex> g(r.lock);
  const int64_t handle = r.next_range++;
  r.open_ranges.emplace(handle, std::move(e));
  return handle;
}

void range_end(int64_t handle) {
  if (handle == 0) return;
  std::unique_ptr<Event> e;
  {
    std::lock_guard<std::mutex> g(recorder().lock);
    auto it = recorder().open_ranges.find(handle);
    if (it == recorder().open_ranges.end()) return;  // its profile has ended
    e = std::move(it->second);
    recorder().open_ranges.erase(it);
  }
  finish(std::move(e));
}

void bind(py::module_& m, py::object) {
  m.def("_profiler_start", &start_profile, py::arg("record_shapes"), py::arg("profile_memory"),
        py::arg("with_stack"));
  m.def("_profiler_stop", &stop_profile);
  m.def("_profiler_collect", &collect);
  m.def("_profiler_active", &active);
  m.def("_profiler_now_ns", &now_ns);
  m.def("_profiler_range_begin", &range_begin, py::arg("name"));
  m.def("_profiler_range_end", &range_end, py::arg("handle"));
}

FLB_BINDINGS(50, bind);

}  // namespace

}  // namespace flambeau::python::profiler
