// Long kernels let other Python threads run while they compute. The core does
// not link Python: the bindings install the two hooks at import, and without
// them (C++ callers) the scope does nothing.
#pragma once

namespace flambeau {

struct InterpreterLockHooks {
  void* (*release)() = nullptr;        // returns a token, or nullptr if the lock was not held
  void (*reacquire)(void*) = nullptr;  // takes the token back
};
extern InterpreterLockHooks g_interpreter_lock;

// Releases Python's interpreter lock for its lifetime. Code inside must not
// touch Python objects (storage deleters that do take the lock themselves).
class ReleaseInterpreterLock {
 public:
  ReleaseInterpreterLock()
      : token_(g_interpreter_lock.release ? g_interpreter_lock.release() : nullptr) {}
  ~ReleaseInterpreterLock() {
    if (token_) g_interpreter_lock.reacquire(token_);
  }
  ReleaseInterpreterLock(const ReleaseInterpreterLock&) = delete;
  ReleaseInterpreterLock& operator=(const ReleaseInterpreterLock&) = delete;

 private:
  void* token_;
};

}  // namespace flambeau
