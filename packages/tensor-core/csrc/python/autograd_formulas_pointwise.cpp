// Native derivative formulas of pointwise arithmetic (see autograd_native.h). They
// compute only the wanted gradients: a value no wanted gradient reads may not have
// been kept. The package declares what each gradient reads (derivatives/pointwise.py).
#include "python/autograd_native.h"

namespace flambeau::python::autograd_native {

namespace {

py::object checked(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

py::object mul(py::handle a, py::handle b) { return checked(PyNumber_Multiply(a.ptr(), b.ptr())); }
py::object div(py::handle a, py::handle b) {
  return checked(PyNumber_TrueDivide(a.ptr(), b.ptr()));
}
py::object neg(py::handle a) { return checked(PyNumber_Negative(a.ptr())); }

// The complex conjugate of a tensor or a number (itself when real): the gradient of
// x * y for x is g * conj(y), PyTorch's convention for complex inputs.
py::object conj(py::handle v) {
  if (is_tensor(v.ptr())) {
    if (is_complex(v.cast<Tensor>()->dtype())) return v.attr("conj")();
  } else if (PyComplex_Check(v.ptr())) {
    return checked(
        PyComplex_FromDoubles(PyComplex_RealAsDouble(v.ptr()), -PyComplex_ImagAsDouble(v.ptr())));
  }
  return py::reinterpret_borrow<py::object>(v);
}

bool is_one(py::handle alpha) {
  static PyObject* one = PyLong_FromLong(1);
  const int eq = PyObject_RichCompareBool(alpha.ptr(), one, Py_EQ);
  if (eq < 0) throw py::error_already_set();
  return eq == 1;
}

// g * conj(alpha), or g when alpha is 1.
py::object scaled(py::handle g, py::handle alpha) {
  return is_one(alpha) ? py::reinterpret_borrow<py::object>(g) : mul(g, conj(alpha));
}

enum { kInput, kOther, kAlpha };

void add(Call& c) {
  if (c.wants(kInput)) c.set(kInput, py::reinterpret_borrow<py::object>(c.grad()));
  if (c.wants(kOther)) c.set(kOther, scaled(c.grad(), c.arg(kAlpha)));
}

void sub(Call& c) {
  if (c.wants(kInput)) c.set(kInput, py::reinterpret_borrow<py::object>(c.grad()));
  if (c.wants(kOther)) c.set(kOther, scaled(neg(c.grad()), c.arg(kAlpha)));
}

void rsub(Call& c) {  // other - alpha * input
  if (c.wants(kInput)) c.set(kInput, scaled(neg(c.grad()), c.arg(kAlpha)));
  if (c.wants(kOther)) c.set(kOther, py::reinterpret_borrow<py::object>(c.grad()));
}

void mul(Call& c) {
  if (c.wants(kInput)) c.set(kInput, mul(c.grad(), conj(c.arg(kOther))));
  if (c.wants(kOther)) c.set(kOther, mul(c.grad(), conj(c.arg(kInput))));
}

// div and true_divide: d(x / y) = g / conj(y) for x, -g * conj(x / y^2) for y. With a
// rounding mode the quotient is piecewise constant: no gradient (PyTorch's zeros are
// what the engine makes of none).
void divide(Call& c, bool rounded) {
  if (rounded) return;
  py::handle x = c.arg(kInput), y = c.arg(kOther);
  if (c.wants(kInput)) c.set(kInput, div(c.grad(), conj(y)));
  if (c.wants(kOther)) c.set(kOther, mul(neg(c.grad()), conj(div(x, mul(y, y)))));
}
void div(Call& c) { divide(c, !c.arg(2).is_none()); }  // 2: rounding_mode
void true_divide(Call& c) { divide(c, false); }

void negate(Call& c) {
  if (c.wants(kInput)) c.set(kInput, neg(c.grad()));
}

}  // namespace

FLB_NATIVE_FORMULA(add, "add", "input", "other", "alpha");
FLB_NATIVE_FORMULA(sub, "sub", "input", "other", "alpha");
FLB_NATIVE_FORMULA(rsub, "rsub", "input", "other", "alpha");
FLB_NATIVE_FORMULA(mul, "mul", "input", "other");
FLB_NATIVE_FORMULA(div, "div", "input", "other", "rounding_mode");
FLB_NATIVE_FORMULA(true_divide, "true_divide", "input", "other");
FLB_NATIVE_FORMULA(negate, "neg", "input");
FLB_NATIVE_FORMULA(negate, "negative", "input");

}  // namespace flambeau::python::autograd_native
