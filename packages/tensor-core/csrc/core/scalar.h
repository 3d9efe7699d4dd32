// A Python number on its way into a kernel: bool, int, float or complex.
#pragma once
#include <complex>
#include <cstdint>

#include "core/dtype.h"

namespace flambeau {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float, Complex };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }                     // NOLINT
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}                 // NOLINT
  Scalar(int64_t v) : kind_(Kind::Int) { i_ = v; }                   // NOLINT
  Scalar(double v) : kind_(Kind::Float) { c_ = {v, 0.0}; }           // NOLINT
  Scalar(std::complex<double> v) : kind_(Kind::Complex) { c_ = v; }  // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }

  template <class T>
  T to() const {
    if (is_integral()) return convert<T>(i_);
    if (kind_ == Kind::Float) return convert<T>(c_.real());
    return convert<T>(c_);
  }
  double to_double() const { return to<double>(); }
  int64_t to_int() const { return to<int64_t>(); }

  // dtype a Python number of this kind becomes as a tensor (wrapped number).
  ScalarType natural_dtype() const {
    switch (kind_) {
      case Kind::Bool:
        return ScalarType::Bool;
      case Kind::Int:
        return ScalarType::Int64;
      case Kind::Float:
        return ScalarType::Float64;
      default:
        return ScalarType::Complex128;
    }
  }

 private:
  Kind kind_;
  int64_t i_ = 0;
  std::complex<double> c_;
};

}  // namespace flambeau
