// Error types raised by the core. The Python bindings translate each one to the
// Python exception of the same name, so C++ code states intent, not Python.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace flambeau {

struct Error : std::runtime_error {  // -> RuntimeError
  using std::runtime_error::runtime_error;
};
struct IndexError : Error {
  using Error::Error;
};
struct TypeError : Error {
  using Error::Error;
};
struct ValueError : Error {
  using Error::Error;
};
struct NotImplementedError : Error {
  using Error::Error;
};
// A device (or pinned host) allocation failed: -> flambeau.OutOfMemoryError, a
// RuntimeError subclass (torch.OutOfMemoryError, torch.cuda.OutOfMemoryError).
struct OutOfMemoryError : Error {
  using Error::Error;
};
// A LAPACK routine reported a singular or not positive-definite input (info > 0):
// -> flambeau.linalg.LinAlgError, a RuntimeError subclass (torch.linalg.LinAlgError).
struct LinAlgError : Error {
  using Error::Error;
};

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <class E = Error, class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw E(str_cat(args...));
}

}  // namespace flambeau

#define FLB_LIKELY(x) __builtin_expect(!!(x), 1)
#define FLB_UNLIKELY(x) __builtin_expect(!!(x), 0)

// FLB_CHECK(cond, "op: message ", value, ...) raises RuntimeError.
#define FLB_CHECK(cond, ...) \
  if (FLB_UNLIKELY(!(cond))) ::flambeau::fail<::flambeau::Error>(__VA_ARGS__)
#define FLB_CHECK_T(E, cond, ...) \
  if (FLB_UNLIKELY(!(cond))) ::flambeau::fail<::flambeau::E>(__VA_ARGS__)
