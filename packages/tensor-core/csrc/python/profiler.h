// The operator profiler's recorder (flambeau.profiler, PyTorch's torch.profiler on the
// CPU). While a profile is active, every operator called through the generated bindings,
// every node the autograd engine runs, and every record_function range becomes an event:
// name, thread, start and end on the steady clock, the net bytes the CPU allocator handed
// out meanwhile, and on request the inputs' shapes and the Python stack. Python
// (flambeau/profiler/) collects them and builds PyTorch's event tree, tables and traces.
//
// Off, a scope costs one relaxed atomic load: the bindings construct one on every call.
#pragma once
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace flambeau::python {

class ParsedArgs;

namespace profiler {

enum class EventKind : int { Operator = 0, UserRange = 1, BackwardNode = 2 };

struct Config {
  bool record_shapes = false, profile_memory = false, with_stack = false;
};

struct Event {
  std::string name;
  EventKind kind = EventKind::Operator;
  int64_t thread = 0;  // the native thread id (threading.get_native_id())
  int64_t start_ns = 0, end_ns = 0;
  int64_t memory_before = 0, memory_after = 0;  // CPU allocator's bytes in use
  std::vector<std::vector<int64_t>> shapes;     // per argument; empty for non-tensors
  std::vector<std::string> concrete;            // per argument: a scalar's value, or ""
  std::vector<std::string> stack;               // innermost frame first: "file(line): fn"
};

extern std::atomic<bool> g_active;
inline bool active() { return g_active.load(std::memory_order_relaxed); }

// A new event of the active profile, its clock started; finish() times and records it.
std::unique_ptr<Event> start_event(std::string name, EventKind kind);
std::unique_ptr<Event> start_event(std::string name, EventKind kind, const Config& config);
void finish(std::unique_ptr<Event> event);

// Records one operator call for the scope's lifetime, when a profile is active.
class OpScope {
 public:
  OpScope(const char* name, const ParsedArgs& args) {
    if (__builtin_expect(active(), 0)) begin_parsed(name, args);
  }
  OpScope(const char* name, std::initializer_list<PyObject*> operands) {
    if (__builtin_expect(active(), 0)) begin_operands(name, operands);
  }
  ~OpScope() {
    if (__builtin_expect(event_ != nullptr, 0)) finish(std::move(event_));
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  void begin_parsed(const char* name, const ParsedArgs& args);
  void begin_operands(const char* name, std::initializer_list<PyObject*> operands);
  std::unique_ptr<Event> event_;
};

// Records an autograd node's evaluation (PyTorch's "autograd::engine::evaluate_function:
// X" around "X"); the name is read from the node only when a profile is active.
class NodeScope {
 public:
  NodeScope(PyObject* node, bool evaluate_function);
  ~NodeScope() {
    if (__builtin_expect(event_ != nullptr, 0)) finish(std::move(event_));
  }
  NodeScope(const NodeScope&) = delete;
  NodeScope& operator=(const NodeScope&) = delete;

 private:
  std::unique_ptr<Event> event_;
};

}  // namespace profiler
}  // namespace flambeau::python
