// Deterministic-algorithms mode (flambeau.use_deterministic_algorithms), global
// as in PyTorch. Operators whose kernels on a device type are not deterministic
// say so in the operator table (`nondeterministic:`, ops/README.md) or, for a
// plugin's device type, at the plugin's registration; their bindings then call
// alert_not_deterministic while the mode is on. Reading the mode is one load.
#pragma once
#include <string>

namespace flambeau {

namespace detail {
extern bool g_deterministic_algorithms;
}

inline bool deterministic_algorithms_enabled() { return detail::g_deterministic_algorithms; }
bool deterministic_algorithms_warn_only();
void set_deterministic_algorithms(bool enabled, bool warn_only);

// flambeau.utils.deterministic.fill_uninitialized_memory (default on).
bool fill_uninitialized_memory_enabled();
void set_fill_uninitialized_memory(bool enabled);
// Whether new uninitialized memory must be filled now: deterministic mode and
// fill_uninitialized_memory both on.
inline bool should_fill_uninitialized_memory() {
  return deterministic_algorithms_enabled() && fill_uninitialized_memory_enabled();
}

// `caller` (e.g. "index_add_cuda") has no deterministic implementation: raises
// RuntimeError, or with warn_only warns (UserWarning) and returns.
void alert_not_deterministic(const std::string& caller);

// Where warnings go (the Python layer installs PyErr_WarnEx; the default prints
// to stderr). A handler may throw to turn the warning into an error.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
// Emits a UserWarning through the handler.
void emit_warning(const std::string& message);

}  // namespace flambeau
