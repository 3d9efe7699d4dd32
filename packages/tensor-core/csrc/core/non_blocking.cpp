#include "core/non_blocking.h"

namespace flambeau {

namespace {
thread_local bool t_non_blocking = false;
}

bool non_blocking_copy() { return t_non_blocking; }

NonBlockingCopy::NonBlockingCopy(bool requested) : saved_(t_non_blocking) {
  t_non_blocking = requested;
}

NonBlockingCopy::~NonBlockingCopy() { t_non_blocking = saved_; }

}  // namespace flambeau
