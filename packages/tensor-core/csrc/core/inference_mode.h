// Inference mode (flambeau.inference_mode), thread-local as in PyTorch. Memory
// allocated while it is on makes *inference tensors* (StorageImpl::inference):
// they and their views may not be written in place, require grad or be saved
// for backward once the mode is off.
#pragma once

namespace flambeau {

namespace detail {
inline thread_local bool t_inference_mode = false;
}

inline bool inference_mode_enabled() { return detail::t_inference_mode; }
inline void set_inference_mode(bool enabled) { detail::t_inference_mode = enabled; }

// The errors of using an inference tensor outside inference mode.
[[noreturn]] void fail_inference_inplace();
[[noreturn]] void fail_inference_requires_grad();
[[noreturn]] void fail_inference_saved();

}  // namespace flambeau
