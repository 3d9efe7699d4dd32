// CPU kernels of the FFT primitives: NumPy's numpy.fft (pocketfft, in C++)
// does the transform on zero-copy NumPy views of the tensors. NumPy is already
// the core's dependency (its bridge); the project does not keep its own FFT.
//
// The operator bindings call frontends with Python's lock held, but a kernel
// may also run where it was released (a ReleaseInterpreterLock scope, another
// thread), so each kernel takes the lock itself. NumPy >= 2 computes float32
// and complex64 natively and writes into `out=`; NumPy 1.x computes in double
// and the result is cast into the output.
#include "ops/fft_kernels.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace py = pybind11;

namespace flambeau {

namespace {

py::dtype numpy_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return py::dtype("float32");
    case ScalarType::Float64:
      return py::dtype("float64");
    case ScalarType::Complex64:
      return py::dtype("complex64");
    case ScalarType::Complex128:
      return py::dtype("complex128");
    default:
      fail("fft: no CPU FFT for dtype ", dtype_name(t));
  }
}

// A NumPy array viewing t's memory; the capsule keeps t's storage alive for as
// long as NumPy holds the array.
py::array as_array(const Tensor& t) {
  std::vector<py::ssize_t> shape(t->sizes().begin(), t->sizes().end()), strides;
  for (int64_t s : t->strides()) strides.push_back(s * static_cast<int64_t>(t->itemsize()));
  py::capsule owner(new Tensor(t), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(t->dtype()), shape, strides, t->data(), owner);
}

// numpy.fft's norm for a transform in the given direction scaled as `normalization`:
// NumPy names the direction that gets no scaling ("backward": the forward one).
const char* numpy_norm(int64_t normalization, bool forward) {
  if (normalization == kFftNormByRootN) return "ortho";
  const bool unscaled = normalization == kFftNormNone;
  return unscaled == forward ? "backward" : "forward";
}

// Whether NumPy is 2 or later. Called with Python's lock held, which guards the
// cache (a function-local static's own guard could deadlock: the lock may be
// released while the static is being initialized, letting a thread in).
bool numpy_writes_out() {
  static int v2 = -1;
  if (v2 < 0) {
    py::module_ np = py::module_::import("numpy");
    v2 = np.attr("__version__").cast<std::string>()[0] >= '2' ? 1 : 0;
  }
  return v2 == 1;
}

// Runs numpy.fft.<fn>(in, s, axes, norm) into out. s, the signal's sizes, is
// always given, so NumPy never crops or pads: the input's sizes, or the
// output's for c2r (whose input holds half of the last dim).
void run_numpy(const char* fn, const Tensor& out, const Tensor& in, const Tensor& signal,
               IntList dims, const char* norm) {
  FLB_CHECK(Py_IsInitialized(), "fft: the CPU FFT runs NumPy and needs the Python interpreter");
  std::string error;
  {
    py::gil_scoped_acquire gil;
    try {
      py::list axes, sizes;
      for (int64_t d : dims) {
        axes.append(d);
        sizes.append(signal->sizes()[d]);
      }
      py::object transform = py::module_::import("numpy.fft").attr(fn);
      py::array dest = as_array(out);
      if (numpy_writes_out()) {
        transform(as_array(in), sizes, axes, norm, py::arg("out") = dest);
      } else {
        py::object result = transform(as_array(in), sizes, axes, norm);
        py::module_::import("numpy").attr("copyto")(dest, result, py::arg("casting") = "unsafe");
      }
    } catch (py::error_already_set& e) {
      error = e.what();
      error = error.substr(0, error.find("\n\nAt:"));  // the message, not the traceback
    }
  }
  if (!error.empty()) fail("fft: NumPy's FFT failed: ", error);
}

void c2c_kernel(const Tensor& out, const Tensor& in, int64_t normalization, bool forward,
                IntList dims) {
  run_numpy(forward ? "fftn" : "ifftn", out, in, in, dims, numpy_norm(normalization, forward));
}

void r2c_kernel(const Tensor& out, const Tensor& in, int64_t normalization, bool onesided,
                IntList dims) {
  run_numpy(onesided ? "rfftn" : "fftn", out, in, in, dims, numpy_norm(normalization, true));
}

void c2r_kernel(const Tensor& out, const Tensor& in, int64_t normalization, IntList dims) {
  run_numpy("irfftn", out, in, out, dims, numpy_norm(normalization, false));
}

}  // namespace

FLB_REGISTER_KERNEL(_fft_c2c, kCPU, c2c_kernel);
FLB_REGISTER_KERNEL(_fft_r2c, kCPU, r2c_kernel);
FLB_REGISTER_KERNEL(_fft_c2r, kCPU, c2r_kernel);

}  // namespace flambeau
