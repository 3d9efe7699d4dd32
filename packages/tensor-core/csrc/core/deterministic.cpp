#include "core/deterministic.h"

#include <atomic>
#include <cstdio>

#include "core/error.h"

namespace flambeau {

namespace detail {
bool g_deterministic_algorithms = false;
}

namespace {
bool g_warn_only = false;
bool g_fill_uninitialized = true;
void print_warning(const std::string& message) {
  std::fprintf(stderr, "UserWarning: %s\n", message.c_str());
}
std::atomic<WarningHandler> g_warning_handler{&print_warning};
}  // namespace

bool deterministic_algorithms_warn_only() { return g_warn_only; }

void set_deterministic_algorithms(bool enabled, bool warn_only) {
  detail::g_deterministic_algorithms = enabled;
  g_warn_only = warn_only;
}

bool fill_uninitialized_memory_enabled() { return g_fill_uninitialized; }
void set_fill_uninitialized_memory(bool enabled) { g_fill_uninitialized = enabled; }

void set_warning_handler(WarningHandler handler) {
  g_warning_handler.store(handler ? handler : &print_warning);
}

void emit_warning(const std::string& message) { g_warning_handler.load()(message); }

void alert_not_deterministic(const std::string& caller) {
  if (!g_warn_only)
    fail(caller,
         " does not have a deterministic implementation, but you set "
         "'flambeau.use_deterministic_algorithms(True)'. You can turn off determinism just for "
         "this operation, or you can use the 'warn_only=True' option, if that's acceptable for "
         "your application.");
  g_warning_handler.load()(str_cat(caller,
                                   " does not have a deterministic implementation, but you set "
                                   "'flambeau.use_deterministic_algorithms(True, "
                                   "warn_only=True)'."));
}

}  // namespace flambeau
