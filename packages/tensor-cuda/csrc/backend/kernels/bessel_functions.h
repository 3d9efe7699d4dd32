// The Bessel functions J_0, J_1, Y_0, Y_1, K_0, K_1 (plain and scaled by e^x) and the
// Airy function Ai as __host__ __device__ code in double precision, for the CUDA kernels
// (special_ops.cu) and the host tests (tests/host_kernels/print_bessel_functions.cpp).
// The CPU (packages/tensor-core/csrc/cpu/special_bessel.h) takes them from libstdc++'s
// std::cyl_bessel_j, cyl_neumann and cyl_bessel_k, which have no device form; here:
//
// - J and Y, 1e-8 <= x < 20: the power series (DLMF 10.2.2, and 10.8.1 for Y, with the
//   harmonic numbers) summed in double-double arithmetic, so that its terms' growth (up
//   to about e^x / x) cancels without loss: J is then correctly rounded but next to its
//   zeros, where its error stays below 1e-25 (a few ulps at the first ones); Y is right
//   to about 1e-16 absolute (its log(x/2) is a double).
// - J and Y, 20 <= x <= 1000: Hankel's expansion (DLMF 10.17.3), summed to its smallest
//   term (about e^-2x), with cos and sin of x - (nu/2 + 1/4) pi from cos x and sin x, so
//   the phase has no rounding error.
// - J, Y above 1000 and Ai below -131 (Bessel argument above 1000): Hankel's expansion
//   with the phase x - (nu + 1/2) pi/2 rounded to double, as the CPU (and SciPy's Cephes)
//   rounds it, so that huge arguments give the CPU's values.
// - K, 1e-8 <= x <= 1: the power series (DLMF 10.31.1); 1 < x < 20: the integral
//   e^x K_nu(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt (DLMF 10.32.9) by the
//   trapezoidal rule, whose error falls like exp(-2 pi^2 / (x h^2)) for a step h
//   (exp(-pi^2 / h) for small x): positive terms, a few ulps; x >= 20: Hankel's
//   expansion, as the CPU.
// - Ai: its Maclaurin series (DLMF 9.4.1) in double-double for -9.65 < x <= 1 (Bessel
//   argument z = 2/3 |x|^(3/2) below 20; next to the zeros within 1e-25);
//   Ai(x) = sqrt(x/3) K_{1/3}(z) / pi (DLMF 9.6.1) for x > 1, K_{1/3} as K above and, from
//   z = 20, the CPU's form (exp(-z) of a rounded z: relative error up to z * 1.1e-16,
//   as the CPU's and SciPy's, and the CPU's underflow); the asymptotic expansion of
//   Ai(-x) (DLMF 9.7.9) for z >= 20, with z in double-double so the phase is exact, and
//   the CPU's form beyond z = 1000.
// - Below 1e-8 and at the edges (NaN, +-inf, 0, negative arguments, underflow, J and Y
//   0 above 5.7e307 where pi x overflows) the CPU's formulas and values, as PyTorch and
//   SciPy define them.
// The CPU's own J and Y for 20 <= x <= 1000 and Ai for -131 < x < -9.65 (libstdc++'s
// Steed method) are off by up to 1.9e-14 x (Ai: z) relative to the amplitude; these are
// within a few ulps of the exact values there (tests/test_bessel_functions.py).
#pragma once
#include <math.h>

#include "backend/kernels/special_functions.h"

namespace flambeau::cuda::kernels::special {

namespace bessel_jyk {

using bessel_detail::hankel_sum;
using bessel_detail::kLarge;  // 20: Hankel's expansion converges to double precision
using bessel_detail::kPi;
using bessel_detail::kTiny;  // 1e-8: the power series' leading terms are exact

constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kLog2 = 0.69314718055994530942;
constexpr double kTwoOverPi = 0.63661977236758134308;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrtPi = 0.56418958354775628695;
constexpr double kHalfPi = 1.5707963267948966192;
// Above this the CPU takes the Bessel functions J and Y from Hankel's expansion.
constexpr double kCpuAsymptotic = 1000.0;

// ---- double-double arithmetic: hi + lo with |lo| <= ulp(hi) / 2 ----
struct Dd {
  double hi, lo;
};

FLB_HD inline Dd fast_two_sum(double a, double b) {  // |a| >= |b|
  const double s = a + b;
  return {s, b - (s - a)};
}
FLB_HD inline Dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
FLB_HD inline Dd two_prod(double a, double b) {
  const double p = a * b;
  return {p, fma(a, b, -p)};
}
FLB_HD inline Dd dd_add(Dd a, Dd b) {
  Dd s = two_sum(a.hi, b.hi);
  const Dd t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
FLB_HD inline Dd dd_mul(Dd a, Dd b) {
  const Dd p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
FLB_HD inline Dd dd_mul(Dd a, double b) {
  const Dd p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + a.lo * b);
}
FLB_HD inline Dd dd_div(Dd a, double b) {
  const double q = a.hi / b;
  const Dd p = two_prod(q, b);
  return fast_two_sum(q, ((a.hi - p.hi) - p.lo + a.lo) / b);
}

// log(x / 2) + gamma, without x / 2 underflowing for subnormal x (the CPU's form).
FLB_HD inline double log_half_plus_gamma(double x) { return log(x) - kLog2 + kEulerGamma; }

// ---- J and Y below kLarge ----
// The power series of J_nu (nu 0 or 1) without its factor (x/2)^nu: sum_k t_k with
// t_k = (-x^2/4)^k / (k! (k + nu)!); with `harmonic`, also h = sum_k c_k t_k, where
// c_k = H_k for nu = 0 (from k = 1) and H_k + H_{k+1} for nu = 1 (H_k harmonic numbers).
FLB_HD inline void jy_series(int nu, double x, bool harmonic, Dd* sum, Dd* h) {
  const Dd q = two_prod(x / 2, x / 2);
  const Dd minus_q{-q.hi, -q.lo};
  Dd term{1.0, 0.0}, s{1.0, 0.0}, hk{0.0, 0.0}, hs{0.0, 0.0};
  if (harmonic && nu == 1) hs = hk = Dd{1.0, 0.0};  // c_0 = H_0 + H_1 = 1
  Dd h_prev{0.0, 0.0};                              // H_k
  for (int k = 1; k < 200; ++k) {
    term = dd_div(dd_mul(term, minus_q), static_cast<double>(k) * (k + nu));
    s = dd_add(s, term);
    if (harmonic) {
      const Dd h_k = dd_add(h_prev, dd_div(Dd{1.0, 0.0}, k));
      if (nu == 0) {
        hk = h_k;
      } else {  // H_k + H_{k+1}
        hk = dd_add(dd_add(h_k, h_k), dd_div(Dd{1.0, 0.0}, k + 1));
      }
      h_prev = h_k;
      hs = dd_add(hs, dd_mul(term, hk));
    }
    // Past the largest term (k^2 > x^2/4) the terms fall faster than geometrically.
    if (k * k > q.hi && fabs(term.hi) * (1.0 + k) < 1e-34 * fabs(s.hi)) break;
  }
  *sum = s;
  *h = hs;
}

// ---- Hankel's expansion ----
// P and Q of J_nu(x) = sqrt(2 / (pi x)) (P cos w - Q sin w) and
// Y_nu(x) = sqrt(2 / (pi x)) (P sin w + Q cos w), w = x - (nu / 2 + 1/4) pi:
// P = sum_k (-1)^k a_2k / x^2k, Q = sum_k (-1)^k a_2k+1 / x^(2k+1) with
// a_k = prod_{j=1..k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), summed to the smallest term.
FLB_HD inline void hankel_pq(double nu, double x, double* p, double* q) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sp = 1.0, sq = 0.0;
  for (int k = 1; k < 200; ++k) {
    const double odd = 2.0 * k - 1.0;
    const double next = term * (mu - odd * odd) / (8.0 * k * x);  // a_k / x^k
    if (!(fabs(next) < fabs(term))) break;
    term = next;
    const double signed_term = (k & 2) ? -term : term;  // (-1)^floor(k/2)
    if (k & 1) {
      sq += signed_term;
    } else {
      sp += signed_term;
    }
    if (fabs(term) < 1e-18) break;
  }
  *p = sp;
  *q = sq;
}

// J_nu (jy = 0) or Y_nu (jy = 1), nu 0 or 1, for kLarge <= x.
FLB_HD inline double jy_hankel(int nu, double x, int jy) {
  double p, q;
  hankel_pq(nu, x, &p, &q);
  double c, s;  // cos w and sin w
  if (x > kCpuAsymptotic) {
    // The CPU's phase, x - (nu + 1/2) pi/2 rounded, and factor. (The constants are
    // constexpr: no multiply-add can fuse them into the subtraction.)
    constexpr double kPhase0 = 0.5 * kHalfPi, kPhase1 = 1.5 * kHalfPi;
    const double w = x - (nu == 0 ? kPhase0 : kPhase1);
    c = cos(w);
    s = sin(w);
    const double coef = sqrt(2.0 / (kPi * x));
    return jy == 0 ? coef * (c * p - s * q) : coef * (s * p + c * q);
  }
  // cos and sin of x - pi/4 (nu = 0) or x - 3 pi/4 (nu = 1) from those of x, without
  // rounding x - w.
  const double cx = cos(x), sx = sin(x);
  if (nu == 0) {
    c = (cx + sx) * kSqrtHalf;
    s = (sx - cx) * kSqrtHalf;
  } else {
    c = (sx - cx) * kSqrtHalf;
    s = -(sx + cx) * kSqrtHalf;
  }
  const double coef = sqrt(2.0 / (kPi * x));
  return jy == 0 ? coef * (c * p - s * q) : coef * (s * p + c * q);
}

// ---- K ----
// K_nu(x), nu 0 or 1, for kTiny <= x <= 1 from the power series: with L = log(x/2) + gamma,
// K_0 = -L I_0 + sum_{k>=1} H_k u_k, u_k = (x^2/4)^k / (k!)^2, and
// K_1 = 1/x + L I_1 - x/4 sum_k (H_k + H_{k+1}) v_k, v_k = (x^2/4)^k / (k! (k+1)!).
FLB_HD inline double k_series(int nu, double x) {
  const double q = x * x / 4.0;
  double term = 1.0, i_sum = 1.0, h_sum = nu == 0 ? 0.0 : 1.0, h = 0.0;
  for (int k = 1; k < 60; ++k) {
    term *= q / (static_cast<double>(k) * (k + nu));
    i_sum += term;
    const double h_next = h + 1.0 / k;  // H_k
    h_sum += term * (nu == 0 ? h_next : h_next + h_next + 1.0 / (k + 1));
    h = h_next;
    if (term * h < 1e-18 * h_sum) break;
  }
  const double l = log_half_plus_gamma(x);
  if (nu == 0) return h_sum - l * i_sum;
  return 1.0 / x + l * (x / 2.0) * i_sum - x / 4.0 * h_sum;
}

// e^x K_nu(x) for x >= nu, x > 0, by the trapezoidal rule on
// int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt. The integrand is analytic in the strip
// |Im t| < pi/2 and falls monotonically (x >= nu): the step min(0.2, 0.6 / sqrt(x))
// leaves an error below 1e-17, and the sum stops once its terms do not matter.
FLB_HD inline double scaled_k_trapezoid(double nu, double x) {
  const double h = fmin(0.2, 0.6 / sqrt(x));
  double sum = 0.5;  // half the integrand at 0
  for (int j = 1; j < 1000; ++j) {
    const double t = j * h;
    const double s = sinh(t / 2.0);
    const double f = exp(-2.0 * x * s * s) * cosh(nu * t);
    sum += f;
    if (f < 1e-18 * sum) break;
  }
  return h * sum;
}

// K_nu(x) (scaled: e^x K_nu(x)), nu 0 or 1: NaN for x < 0 and NaN, inf at 0, the
// CPU's leading terms below kTiny and Hankel's expansion from kLarge (0 at inf).
FLB_HD inline double bessel_k(int nu, double x, bool scaled) {
  if (isnan(x) || x < 0) return kSpecialNaN;
  if (x == 0) return kSpecialInf;
  double k;
  if (x < kTiny) {
    // K_0(x) ~ -(log(x/2) + gamma), K_1(x) ~ 1/x + x/2 (log(x/2) + gamma - 1/2).
    const double l = log_half_plus_gamma(x);
    k = nu == 0 ? -l : 1.0 / x + x / 2 * (l - 0.5);
  } else if (x <= 1.0) {
    k = k_series(nu, x);
  } else if (x < kLarge) {
    const double s = scaled_k_trapezoid(nu, x);
    return scaled ? s : s * exp(-x);
  } else {
    const double s = hankel_sum(nu, x, 1.0) * sqrt(kPi / (2.0 * x));
    return scaled ? s : s * exp(-x);
  }
  return scaled ? k * exp(x) : k;
}

// ---- Ai ----
// Ai(0) and -Ai'(0) in double-double (scalars: usable in device code).
constexpr double kAi0Hi = 0.3550280538878172, kAi0Lo = 2.05233632436212e-17;
constexpr double kMinusDai0Hi = 0.2588194037928068, kMinusDai0Lo = -2.522243111610832e-17;

// Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum_k x^3k / prod_{j<k} (3j+2)(3j+3),
// g = sum_k x^(3k+1) / prod_{j<k} (3j+3)(3j+4), in double-double (both grow like
// e^(2/3 |x|^1.5) for negative x, and cancel for positive x).
FLB_HD inline double airy_maclaurin(double x) {
  const Dd x2 = two_prod(x, x);
  const Dd x3 = dd_mul(x2, x);
  Dd tf{1.0, 0.0}, f{1.0, 0.0}, tg{x, 0.0}, g{x, 0.0};
  for (int k = 0; k < 200; ++k) {
    tf = dd_div(dd_mul(tf, x3), (3.0 * k + 2.0) * (3.0 * k + 3.0));
    tg = dd_div(dd_mul(tg, x3), (3.0 * k + 3.0) * (3.0 * k + 4.0));
    f = dd_add(f, tf);
    g = dd_add(g, tg);
    if (fabs(tf.hi) + fabs(tg.hi) <= 1e-34 * (fabs(f.hi) + fabs(g.hi))) break;
  }
  const Dd a = dd_mul(f, Dd{kAi0Hi, kAi0Lo}), b = dd_mul(g, Dd{kMinusDai0Hi, kMinusDai0Lo});
  return dd_add(a, Dd{-b.hi, -b.lo}).hi;
}

// Ai(-a) for z = 2/3 a^1.5 in [kLarge, kCpuAsymptotic]: (DLMF 9.7.9)
// Ai(-a) = a^(-1/4) / sqrt(pi) (cos(z - pi/4) P + sin(z - pi/4) Q),
// P = sum_k (-1)^k u_2k / z^2k, Q = sum_k (-1)^k u_2k+1 / z^(2k+1),
// u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k), summed to the smallest term. z is
// formed in double-double and its low part enters the phase to first order.
FLB_HD inline double airy_ai_negative(double a) {
  const double r = sqrt(a);
  const Dd root{r, fma(-r, r, a) / (2.0 * r)};
  const Dd z3 = dd_div(dd_mul(root, a), 3.0);  // a^1.5 / 3
  const double z = 2.0 * z3.hi, dz = 2.0 * z3.lo;
  double term = 1.0, p = 1.0, q = 0.0;
  for (int k = 1; k < 200; ++k) {
    const double next = term * ((6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0)) /
                        ((2.0 * k - 1.0) * 216.0 * k * z);
    if (!(next < term)) break;
    term = next;
    const double signed_term = (k & 2) ? -term : term;  // (-1)^floor(k/2)
    if (k & 1) {
      q += signed_term;
    } else {
      p += signed_term;
    }
    if (term < 1e-18) break;
  }
  const double cz = cos(z), sz = sin(z);
  const double c0 = (cz + sz) * kSqrtHalf, s0 = (sz - cz) * kSqrtHalf;  // at z - pi/4
  const double c = c0 - dz * s0, s = s0 + dz * c0;
  return kInvSqrtPi / sqrt(r) * (c * p + s * q);
}

}  // namespace bessel_jyk

// J_0 (even) and J_1 (odd); NaN at +-inf and NaN, as the CPU.
FLB_HD inline double bessel_j0(double x) {
  using namespace bessel_jyk;
  x = fabs(x);
  if (isnan(x) || isinf(x)) return kSpecialNaN;
  if (x < kTiny) return 1.0 - x * x / 4;
  if (x >= kLarge) return jy_hankel(0, x, 0);
  Dd s, h;
  jy_series(0, x, false, &s, &h);
  return s.hi;
}

FLB_HD inline double bessel_j1(double x) {
  using namespace bessel_jyk;
  if (isnan(x) || isinf(x)) return kSpecialNaN;
  const double a = fabs(x);
  double j;
  if (a < kTiny) {
    j = a / 2 * (1.0 - a * a / 8);
  } else if (a >= kLarge) {
    j = jy_hankel(1, a, 0);
  } else {
    Dd s, h;
    jy_series(1, a, false, &s, &h);
    j = dd_mul(s, a / 2).hi;
  }
  return x < 0 ? -j : j;
}

// Y_0 and Y_1: NaN for x < 0, +inf and NaN, -inf at 0.
// Y_0 = 2/pi (L J_0 - sum_{k>=1} H_k t_k), L = log(x/2) + gamma (DLMF 10.8.1).
FLB_HD inline double bessel_y0(double x) {
  using namespace bessel_jyk;
  if (isnan(x) || x < 0 || isinf(x)) return kSpecialNaN;
  if (x == 0) return -kSpecialInf;
  if (x < kTiny) return kTwoOverPi * log_half_plus_gamma(x);
  if (x >= kLarge) return jy_hankel(0, x, 1);
  Dd j, h;
  jy_series(0, x, true, &j, &h);
  const Dd v = dd_add(dd_mul(j, log_half_plus_gamma(x)), Dd{-h.hi, -h.lo});
  return kTwoOverPi * v.hi;
}

// Y_1 = 2/pi (-1/x + L J_1 - x/4 sum_k (H_k + H_{k+1}) t_k) (DLMF 10.8.1).
FLB_HD inline double bessel_y1(double x) {
  using namespace bessel_jyk;
  if (isnan(x) || x < 0 || isinf(x)) return kSpecialNaN;
  if (x == 0) return -kSpecialInf;
  // Y_1(x) ~ -2 / (pi x) + x / pi (log(x/2) + gamma - 1/2).
  if (x < kTiny) return -2.0 / (kPi * x) + x / kPi * (log_half_plus_gamma(x) - 0.5);
  if (x >= kLarge) return jy_hankel(1, x, 1);
  Dd s, h;
  jy_series(1, x, true, &s, &h);
  const Dd j1 = dd_mul(s, x / 2);
  const Dd inv_x = dd_div(Dd{1.0, 0.0}, x);
  Dd v = dd_add(dd_mul(j1, log_half_plus_gamma(x)), dd_mul(h, -x / 4));
  v = dd_add(v, Dd{-inv_x.hi, -inv_x.lo});
  return kTwoOverPi * v.hi;
}

// K_0 and K_1, plain and scaled by e^x.
FLB_HD inline double modified_bessel_k0(double x) { return bessel_jyk::bessel_k(0, x, false); }
FLB_HD inline double modified_bessel_k1(double x) { return bessel_jyk::bessel_k(1, x, false); }
FLB_HD inline double scaled_modified_bessel_k0(double x) {
  return bessel_jyk::bessel_k(0, x, true);
}
FLB_HD inline double scaled_modified_bessel_k1(double x) {
  return bessel_jyk::bessel_k(1, x, true);
}

// The Airy function Ai; NaN at +-inf and NaN, as the CPU.
FLB_HD inline double airy_ai(double x) {
  using namespace bessel_jyk;
  if (isnan(x) || isinf(x)) return kSpecialNaN;
  const double a = fabs(x);
  const double z = 2.0 / 3.0 * a * sqrt(a);  // the CPU's z
  if (x <= 1.0 && (x >= 0 || z < kLarge)) return airy_maclaurin(x);
  if (x > 0) {
    if (z < kLarge) return sqrt(x / 3.0) / kPi * (scaled_k_trapezoid(1.0 / 3.0, z) * exp(-z));
    // The CPU's form: sqrt(x/3) K_{1/3}(z) / pi, K from Hankel's expansion.
    const double k = hankel_sum(1.0 / 3.0, z, 1.0) * sqrt(kPi / (2.0 * z)) * exp(-z);
    return sqrt(x / 3.0) * k / kPi;
  }
  if (isinf(z)) return 0.0;  // |Ai(x)| <= |x|^(-1/4) / sqrt(pi)
  if (z <= kCpuAsymptotic) return airy_ai_negative(a);
  // The CPU's form: sqrt(a)/2 (J_{1/3}(z) - Y_{1/3}(z) / sqrt(3)), J and Y from Hankel's
  // expansion with the phase z - (1/3 + 1/2) pi/2 rounded.
  double p, q;
  hankel_pq(1.0 / 3.0, z, &p, &q);
  constexpr double kPhase = (1.0 / 3.0 + 0.5) * kHalfPi;
  const double w = z - kPhase;
  const double c = cos(w), s = sin(w);
  const double coef = sqrt(2.0 / (kPi * z));
  const double j = coef * (c * p - s * q);
  const double y = coef * (s * p + c * q);
  return sqrt(a) / 2.0 * (j - y / sqrt(3.0));
}

}  // namespace flambeau::cuda::kernels::special
