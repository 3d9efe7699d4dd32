// A fused activation, swish(x) = x * sigmoid(beta * x), with its backward kernel: one
// pass over memory each way instead of the four a composition of built-in operators
// makes. Built by demo_fused_activation.py with flambeau.utils.cpp_extension.load().
#include <flambeau/extension.h>

#include <cmath>

namespace {

template <class T>
void swish_forward_kernel(const T* x, T* y, int64_t n, T beta) {
  for (int64_t i = 0; i < n; ++i) {
    T s = T(1) / (T(1) + std::exp(-beta * x[i]));
    y[i] = x[i] * s;
  }
}

// d/dx [x * s(beta x)] = s + beta * x * s * (1 - s)
template <class T>
void swish_backward_kernel(const T* grad, const T* x, T* out, int64_t n, T beta) {
  for (int64_t i = 0; i < n; ++i) {
    T s = T(1) / (T(1) + std::exp(-beta * x[i]));
    out[i] = grad[i] * (s + beta * x[i] * s * (T(1) - s));
  }
}

void check_input(const flambeau::Tensor& x, const char* what) {
  FLAMBEAU_CHECK(x.is_cpu(), "swish: ", what, " must be on the CPU, got ", x.device().str());
  FLAMBEAU_CHECK_TYPE(x.dtype() == flambeau::kFloat32 || x.dtype() == flambeau::kFloat64,
                      "swish: ", what, " must be float32 or float64, got ",
                      flambeau::dtype_name(x.dtype()));
}

}  // namespace

flambeau::Tensor swish_forward(const flambeau::Tensor& x, double beta) {
  check_input(x, "input");
  flambeau::Tensor xc = x.contiguous();
  flambeau::Tensor y = flambeau::empty_like(xc);
  if (xc.dtype() == flambeau::kFloat32) {
    swish_forward_kernel(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(),
                         static_cast<float>(beta));
  } else {
    swish_forward_kernel(xc.data_ptr<double>(), y.data_ptr<double>(), xc.numel(), beta);
  }
  return y;
}

flambeau::Tensor swish_backward(const flambeau::Tensor& grad, const flambeau::Tensor& x,
                                double beta) {
  check_input(x, "input");
  FLAMBEAU_CHECK(grad.sizes() == x.sizes(), "swish_backward: grad and input sizes differ");
  FLAMBEAU_CHECK(grad.dtype() == x.dtype(), "swish_backward: grad and input dtypes differ");
  flambeau::Tensor xc = x.contiguous();
  flambeau::Tensor gc = grad.contiguous();
  flambeau::Tensor out = flambeau::empty_like(xc);
  if (xc.dtype() == flambeau::kFloat32) {
    swish_backward_kernel(gc.data_ptr<float>(), xc.data_ptr<float>(), out.data_ptr<float>(),
                          xc.numel(), static_cast<float>(beta));
  } else {
    swish_backward_kernel(gc.data_ptr<double>(), xc.data_ptr<double>(), out.data_ptr<double>(),
                          xc.numel(), beta);
  }
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("swish_forward", &swish_forward, "swish(x) = x * sigmoid(beta * x)", pybind11::arg("x"),
        pybind11::arg("beta") = 1.0);
  m.def("swish_backward", &swish_backward, "the gradient of swish with respect to x",
        pybind11::arg("grad"), pybind11::arg("x"), pybind11::arg("beta") = 1.0);
}
