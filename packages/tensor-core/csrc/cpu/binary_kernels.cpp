// CPU kernels of binary arithmetic operators.
#include <atomic>
#include <cmath>
#include <limits>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

template <class C>
constexpr bool is_int_v = std::is_integral_v<C> && !std::is_same_v<C, bool>;

void add_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  binary_op<kAllTypes>(out, in, "add", [&](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      bool alpha = args[0].to<bool>();
      return [alpha](bool x, bool y) { return x || (alpha && y); };
    } else {
      C alpha = args[0].to<C>();
      return [alpha](C x, C y) { return C(x + alpha * y); };
    }
  });
}

void sub_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  binary_op<kRealTypes | kComplexTypes>(out, in, "sub", [&](auto tag) {
    using C = typename decltype(tag)::type;
    C alpha = args[0].to<C>();
    return [alpha](C x, C y) { return C(x - alpha * y); };
  });
}

void mul_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kAllTypes>(out, in, "mul", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>)
      return [](bool x, bool y) { return x && y; };
    else
      return [](C x, C y) { return C(x * y); };
  });
}

// Floor division of floats as NumPy and PyTorch compute it (exact for the
// quotient's integer part, zero signed like the true quotient).
template <class C>
C floor_div_float(C a, C b) {
  if (b == 0) return a / b;
  C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(C(0), a / b);
  C f = std::floor(div);
  if (div - f > C(0.5)) f += 1;
  return f;
}

// Integer kernels flag a zero divisor instead of dividing; the caller raises
// once the loop is done (no exceptions inside parallel regions).
void fail_zero_division(const char* op) { fail(op, ": ZeroDivisionError"); }

// Runs body(flag); integer lambdas inside mark a zero divisor through
// is_zero_divisor(flag, b), and the error is raised after the loops.
template <class Body>
void checking_zero_divisor(const char* op, const Body& body) {
  std::atomic<bool> zero{false};
  body(&zero);
  if (zero) fail_zero_division(op);
}

template <class C>
bool is_zero_divisor(std::atomic<bool>* flag, C b) {
  if (b != 0) return false;
  flag->store(true, std::memory_order_relaxed);
  return true;
}

void div_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const int64_t mode = args[0].to_int();  // 0 true, 1 trunc, 2 floor
  if (mode == 0) {                        // true division: the promoted type is float or complex
    binary_op<kFloatTypes | kComplexTypes>(out, in, "div", [](auto tag) {
      using C = typename decltype(tag)::type;
      return [](C a, C b) { return C(a / b); };
    });
    return;
  }
  checking_zero_divisor("div", [&](std::atomic<bool>* zp) {
    binary_op<kRealTypes>(out, in, "div", [&](auto tag) {
      using C = typename decltype(tag)::type;
      return [mode, zp](C a, C b) -> C {
        if constexpr (is_int_v<C>) {
          if (is_zero_divisor(zp, b)) return 0;
          if constexpr (std::is_signed_v<C>) {  // no INT_MIN / -1 overflow
            if (b == -1) return C(-static_cast<std::make_unsigned_t<C>>(a));
          }
          C q = a / b;
          if (mode == 2 && (a % b != 0) && ((a < 0) != (b < 0))) --q;
          return q;
        } else {
          if (mode == 1) return std::trunc(a / b);
          return floor_div_float(a, b);
        }
      };
    });
  });
}

void remainder_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  checking_zero_divisor("remainder", [&](std::atomic<bool>* zp) {
    binary_op<kRealTypes>(out, in, "remainder", [&](auto tag) {
      using C = typename decltype(tag)::type;
      return [zp](C a, C b) -> C {
        if constexpr (is_int_v<C>) {
          if (is_zero_divisor(zp, b)) return 0;
          if constexpr (std::is_signed_v<C>) {
            if (b == -1) return 0;
          }
          C r = a % b;
          if (r != 0 && ((r < 0) != (b < 0))) r += b;
          return r;
        } else {
          C m = std::fmod(a, b);
          if (m != 0 && ((b < 0) != (m < 0))) m += b;
          return m;
        }
      };
    });
  });
}

void fmod_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  checking_zero_divisor("fmod", [&](std::atomic<bool>* zp) {
    binary_op<kRealTypes>(out, in, "fmod", [&](auto tag) {
      using C = typename decltype(tag)::type;
      return [zp](C a, C b) -> C {
        if constexpr (is_int_v<C>) {
          if (is_zero_divisor(zp, b)) return 0;
          if constexpr (std::is_signed_v<C>) {
            if (b == -1) return 0;
          }
          return a % b;
        } else {
          return std::fmod(a, b);
        }
      };
    });
  });
}

template <class C>
C int_pow(C base, C exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == C(-1)) return (exp & 1) ? C(-1) : C(1);
    return 0;
  }
  using U = std::make_unsigned_t<C>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = static_cast<std::make_unsigned_t<C>>(exp); e; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<C>(result);
}

void pow_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kAllTypes>(out, in, "pow", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) -> C {
      if constexpr (std::is_same_v<C, bool>) {
        return a || !b;
      } else if constexpr (is_int_v<C>) {
        return int_pow(a, b);
      } else if constexpr (is_complex_t<C>::value) {
        if (b == C(2)) return a * a;
        return std::pow(a, b);
      } else {
        return std::pow(a, b);
      }
    };
  });
}

}  // namespace

FLB_REGISTER_KERNEL(add, kCPU, add_kernel);
FLB_REGISTER_KERNEL(sub, kCPU, sub_kernel);
FLB_REGISTER_KERNEL(mul, kCPU, mul_kernel);
FLB_REGISTER_KERNEL(div, kCPU, div_kernel);
FLB_REGISTER_KERNEL(remainder, kCPU, remainder_kernel);
FLB_REGISTER_KERNEL(fmod, kCPU, fmod_kernel);
FLB_REGISTER_KERNEL(pow, kCPU, pow_kernel);

}  // namespace flambeau
