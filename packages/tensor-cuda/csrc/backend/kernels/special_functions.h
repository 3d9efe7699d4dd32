// The CPU's scalar special functions (packages/tensor-core/csrc/cpu/special_math.h,
// special_zeta.h, polygamma.h, special_normal.h, special_gamma.h and
// special_polynomials.h, special_bessel.h's I_0 and I_1) as __host__ __device__ code, the same
// algorithms in double precision, so the CUDA kernels (special_ops.cu) compute what the CPU
// computes and the host tests (tests/host_kernels/print_special_functions.cpp) can check it with
// g++ against values of the CPU backend. libm's functions are called unqualified
// (CUDA's device overloads, or math.h's on the host); lgamma stands for glibc's
// lgamma_r (the same value), and std::hermite and std::legendre for the loops they
// evaluate; std::cyl_bessel_i is replaced by its power series (see bessel_i). The
// Bessel functions J, Y and K and airy_ai, which the CPU takes from libstdc++'s
// std::cyl_bessel_j, cyl_neumann and cyl_bessel_k (no device form), are in
// bessel_functions.h, with algorithms of their own.
#pragma once
#include <math.h>

#include <cstddef>
#include <cstdint>
#include <limits>

#ifdef __CUDACC__
#define FLB_HD __host__ __device__
#else
#define FLB_HD
#endif

namespace flambeau::cuda::kernels::special {

// Namespace-scope constants of scalar type are usable in device code.
constexpr double kSpecialNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSpecialInf = std::numeric_limits<double>::infinity();
constexpr double kSpecialEps = std::numeric_limits<double>::epsilon();

// ---- from the CPU's cpu/special_math.h ----
// Inverse error function: Giles' single-precision approximation ("Approximating
// the erfinv function", GPU Gems) refined by two Newton steps on erf.
FLB_HD inline double erfinv(double y) {
  if (isnan(y) || y < -1.0 || y > 1.0) return kSpecialNaN;
  if (y == 1.0) return kSpecialInf;
  if (y == -1.0) return -kSpecialInf;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 6.25) {
    w -= 3.125;
    double p = -3.6444120640178196996e-21;
    p = -1.685059138182016589e-19 + p * w;
    p = 1.2858480715256400167e-18 + p * w;
    p = 1.115787767802518096e-17 + p * w;
    p = -1.333171662854620906e-16 + p * w;
    p = 2.0972767875968561637e-17 + p * w;
    p = 6.6376381343583238325e-15 + p * w;
    p = -4.0545662729752068639e-14 + p * w;
    p = -8.1519341976054721522e-14 + p * w;
    p = 2.6335093153082322977e-12 + p * w;
    p = -1.2975133253453532498e-11 + p * w;
    p = -5.4154120542946279317e-11 + p * w;
    p = 1.051212273321532285e-09 + p * w;
    p = -4.1126339803469836976e-09 + p * w;
    p = -2.9070369957882005086e-08 + p * w;
    p = 4.2347877827932403518e-07 + p * w;
    p = -1.3654692000834678645e-06 + p * w;
    p = -1.3882523362786468719e-05 + p * w;
    p = 0.0001867342080340571352 + p * w;
    p = -0.00074070253416626697512 + p * w;
    p = -0.0060336708714301490533 + p * w;
    p = 0.24015818242558961693 + p * w;
    p = 1.6536545626831027356 + p * w;
    x = p * y;
  } else if (w < 16.0) {
    w = sqrt(w) - 3.25;
    double p = 2.2137376921775787049e-09;
    p = 9.0756561938885390979e-08 + p * w;
    p = -2.7517406297064545428e-07 + p * w;
    p = 1.8239629214389227755e-08 + p * w;
    p = 1.5027403968909827627e-06 + p * w;
    p = -4.013867526981545969e-06 + p * w;
    p = 2.9234449089955446044e-06 + p * w;
    p = 1.2475304481671778723e-05 + p * w;
    p = -4.7318229009055733981e-05 + p * w;
    p = 6.8284851459573175448e-05 + p * w;
    p = 2.4031110387097893999e-05 + p * w;
    p = -0.0003550375203628474796 + p * w;
    p = 0.00095328937973738049703 + p * w;
    p = -0.0016882755560235047313 + p * w;
    p = 0.0024914420961078508066 + p * w;
    p = -0.0037512085075692412107 + p * w;
    p = 0.005370914553590063617 + p * w;
    p = 1.0052589676941592334 + p * w;
    p = 3.0838856104922207635 + p * w;
    x = p * y;
  } else {
    w = sqrt(w) - 5.0;
    double p = -2.7109920616438573243e-11;
    p = -2.5556418169965252055e-10 + p * w;
    p = 1.5076572693500548083e-09 + p * w;
    p = -3.7894654401267369937e-09 + p * w;
    p = 7.6157012080783393804e-09 + p * w;
    p = -1.4960026627149240478e-08 + p * w;
    p = 2.9147953450901080826e-08 + p * w;
    p = -6.7711997758452339498e-08 + p * w;
    p = 2.2900482228026654717e-07 + p * w;
    p = -9.9298272942317002539e-07 + p * w;
    p = 4.5260625972231537039e-06 + p * w;
    p = -1.9681778105531670567e-05 + p * w;
    p = 7.5995277030017761139e-05 + p * w;
    p = -0.00021503011930044477347 + p * w;
    p = -0.00013871931833623122026 + p * w;
    p = 1.0103004648645343977 + p * w;
    p = 4.8499064014085844221 + p * w;
    x = p * y;
  }
  // Newton steps: f(x) = erf(x) - y, f'(x) = 2/sqrt(pi) exp(-x^2).
  const double k = 1.1283791670955126;  // 2 / sqrt(pi)
  for (int i = 0; i < 2; ++i) {
    double d = k * exp(-x * x);
    if (d == 0.0) break;
    x -= (erf(x) - y) / d;
  }
  return x;
}

// Digamma: reflection for negative x, recurrence up to x >= 10, then the
// asymptotic series. Poles (0 and negative integers) as in PyTorch.
FLB_HD inline double digamma(double x) {
  const double pi = 3.14159265358979323846;
  if (x == 0.0) return copysign(kSpecialInf, -x);
  if (isnan(x) || x == -kSpecialInf) return kSpecialNaN;
  double result = 0.0;
  if (x < 0.0) {
    if (x == trunc(x)) return kSpecialNaN;
    // psi(x) = psi(1 - x) - pi / tan(pi x); reduce the argument of tan first.
    double r = fmod(x, 1.0);
    result = -pi / tan(pi * r);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  if (x == kSpecialInf) return result + x;
  const double A[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                      7.57575757575757575758E-3, -4.16666666666666666667E-3,
                      3.96825396825396825397E-3, -8.33333333333333333333E-3,
                      8.33333333333333333333E-2};
  double z = 1.0 / (x * x), y = 0.0;
  for (double a : A) y = y * z + a;
  y *= z;
  return result + log(x) - 0.5 / x - y;
}

// ---- from the CPU's cpu/special_zeta.h ----
// zeta(s, q) for real s > 1 and q > 0: the first terms summed until q + k is
// large enough, then the Euler-Maclaurin formula for the rest: a^(1-s) / (s-1)
// + a^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) a^(1-s-2j), where a is the
// first term left out and B_2j are Bernoulli numbers.
FLB_HD inline double hurwitz_zeta(double s, double q) {
  const double eps = kSpecialEps;
  // The tail's series needs a well above s / (2 pi): its terms shrink like
  // ((s + 2j) / (2 pi a))^2. A large s makes the direct terms vanish at once.
  const double start_tail = fmax(9.0, (s + 24.0) / 2.0);
  double sum = 0.0, a = q;
  for (int k = 0; a < start_tail && k < 1000; ++k) {
    const double term = pow(a, -s);
    sum += term;
    a += 1.0;
    // What is left is at most about term * a / (s - 1): stop once that is negligible
    // (or everything underflowed).
    if (term * fmax(1.0, a / (s - 1.0)) <= eps * sum) return sum;
  }
  const double kBernoulliOverFactorial[] = {1.0 / 12.0,
                                            -1.0 / 720.0,
                                            1.0 / 30240.0,
                                            -1.0 / 1209600.0,
                                            1.0 / 47900160.0,
                                            -691.0 / 1307674368000.0,
                                            1.0 / 74724249600.0,
                                            -3617.0 / 10670622842880000.0,
                                            43867.0 / 5109094217170944000.0,
                                            -174611.0 / 802857662698291200000.0,
                                            77683.0 / 14101100039391805440000.0,
                                            -236364091.0 / 1693824136731743669452800000.0};
  // Powers from logs, each on its own: a^-s may underflow where a^(1-s) does not.
  const double log_a = log(a);
  const double power = exp((1.0 - s) * log_a);  // a^(1-s)
  double tail = power / (s - 1.0) + 0.5 * exp(-s * log_a);
  double rising = s, scaled = power / a;  // s (s+1) ... (s+2j-2) and a^(1-s-2j)
  const double inv_a2 = 1.0 / (a * a);
  for (size_t j = 0; j < sizeof(kBernoulliOverFactorial) / sizeof(double); ++j) {
    if (j > 0) rising *= (s + 2.0 * j - 1.0) * (s + 2.0 * j);
    scaled = j == 0 ? scaled / a : scaled * inv_a2;
    const double t = kBernoulliOverFactorial[j] * rising * scaled;
    tail += t;
    if (fabs(t) <= eps * fabs(sum + tail)) break;
  }
  return sum + tail;
}

// torch.special.zeta(x, q): inf at x = 1 and at the poles q = 0, -1, -2, ...;
// NaN for x < 1 and for a negative q with a non-integer x (q^-x is not real).
// zeta(x, inf) is 0, as in SciPy (PyTorch gives NaN).
// For a negative q and an integer x the terms with negative q + k are summed
// directly, or, when there are many, from the identity
// sum_{m=1..M} (f - m)^-x = (-1)^x (zeta(x, 1 - f) - zeta(x, M + 1 - f)).
FLB_HD inline double zeta(double x, double q) {
  const double nan = kSpecialNaN;
  const double inf = kSpecialInf;
  if (isnan(x) || isnan(q)) return nan;
  if (x == 1.0) return inf;
  if (x < 1.0) return nan;
  // The sum is 0 for x = inf and q > 1; PyTorch and SciPy give NaN there.
  if (x == inf && q > 1.0) return nan;
  if (q > 0.0) return hurwitz_zeta(x, q);
  if (q == floor(q)) return inf;
  if (x != floor(x)) return nan;
  const double m_count = -floor(q);  // the negative terms are f - 1, ..., f - M
  const double f = q + m_count;      // q's fractional part, in (0, 1)
  if (m_count <= 64.0) {
    double negative = 0.0;
    for (double v = q; v < 0.0; v += 1.0) negative += pow(v, -x);
    return hurwitz_zeta(x, f) + negative;
  }
  // For odd x and f = 1/2 the first two terms cancel exactly: add them first.
  const double sign = fmod(x, 2.0) == 0.0 ? 1.0 : -1.0;
  return (hurwitz_zeta(x, f) + sign * hurwitz_zeta(x, 1.0 - f)) -
         sign * hurwitz_zeta(x, m_count + 1.0 - f);
}

// ---- from the CPU's cpu/polygamma.h ----
// psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 1; digamma for n = 0. At the
// poles (0 and negative integers) and at -inf: (-1)^(n+1) inf, as SciPy.
FLB_HD inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  const double inf = kSpecialInf;
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  if (isnan(x)) return x;
  if (x == inf) return sign * 0.0;
  if (x <= 0.0 && x == floor(x)) return sign * inf;  // -inf included
  return sign * tgamma(static_cast<double>(n) + 1.0) * zeta(static_cast<double>(n) + 1.0, x);
}

// ---- from the CPU's cpu/special_normal.h ----
namespace normal_detail {
constexpr double kNaN = kSpecialNaN;
constexpr double kInf = kSpecialInf;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtHalfPi = 1.25331413731550025121;  // sqrt(pi / 2)

// exp(x^2) with x^2 split into a rounded part and its rounding error (from fma),
// so the result keeps full precision for large |x|.
FLB_HD inline double exp_square(double x) {
  const double hi = x * x, lo = fma(x, x, -hi);
  return exp(hi) * (1.0 + lo);
}
}  // namespace normal_detail

// erfcx(x) = exp(x^2) erfc(x). Where erfc(x) would underflow (x >= 26) the
// continued fraction erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x +
// (3/2) / (x + ...)))) gives erfcx directly; it converges fast there. For x < 0,
// erfcx(x) = 2 exp(x^2) - erfcx(-x), which overflows to inf below about -26.6.
FLB_HD inline double erfcx(double x) {
  using namespace normal_detail;
  if (isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2.0 * exp_square(x) - erfcx(-x);
  }
  if (x < 26.0) return exp_square(x) * erfc(x);
  double t = x;
  for (int k = 40; k >= 1; --k) t = x + (0.5 * k) / t;
  return 1.0 / (kSqrtPi * t);
}

// The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, through erfc so that the
// lower tail keeps its relative precision.
FLB_HD inline double ndtr(double x) {
  using namespace normal_detail;
  const double t = x * kSqrtHalf;
  return x < 0 ? 0.5 * erfc(-t) : 1.0 - 0.5 * erfc(t);
}

// log(ndtr(x)): for x < -1, log(erfcx(-x / sqrt(2)) / 2) - x^2 / 2, which stays
// finite far into the tail; otherwise log1p(-erfc(x / sqrt(2)) / 2).
FLB_HD inline double log_ndtr(double x) {
  using namespace normal_detail;
  if (isnan(x)) return x;
  if (x < -1.0) return log(0.5 * erfcx(-x * kSqrtHalf)) - 0.5 * x * x;
  return log1p(-0.5 * erfc(x * kSqrtHalf));
}

// The inverse of ndtr. In the centre (0.1 <= p <= 0.9) sqrt(2) erfinv(2p - 1),
// where 2p - 1 is exact enough. In the tails, where 2p - 1 would lose p's
// precision, Newton's method on log(ndtr(x)) = log(p), started from Abramowitz
// and Stegun's approximation 26.2.23 (error below 4.5e-4): the step is
// (log_ndtr(x) - log p) * ndtr(x) / phi(x), and ndtr(x) / phi(x) =
// sqrt(pi / 2) erfcx(-x / sqrt(2)) does not underflow.
FLB_HD inline double ndtri(double p) {
  using namespace normal_detail;
  if (isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  if (p >= 0.1 && p <= 0.9) return kSqrt2 * erfinv(2.0 * p - 1.0);
  // The lower tail; the upper one by symmetry (1 - p is exact for p > 0.5).
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  const double t = sqrt(-2.0 * log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_q = log(q);
  for (int i = 0; i < 10; ++i) {
    const double step = (log_ndtr(x) - log_q) * kSqrtHalfPi * erfcx(-x * kSqrtHalf);
    x -= step;
    if (fabs(step) <= 1e-16 * fabs(x)) break;
  }
  return upper ? -x : x;
}

// ---- from the CPU's cpu/special_gamma.h ----
namespace gamma_detail {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEps = kSpecialEps;

// log(1 + t) - t, without the cancellation of the naive form for small t.
FLB_HD inline double log1pmx(double t) {
  if (fabs(t) > 0.25) return log1p(t) - t;
  double power = t, sum = 0.0;  // -t^2/2 + t^3/3 - t^4/4 + ...
  for (int k = 2; k < 60; ++k) {
    power *= -t;
    const double term = power / k;
    sum += term;
    if (fabs(term) <= kEps * fabs(sum)) break;
  }
  return sum;
}

// lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), from Stirling's series; a >= 10.
FLB_HD inline double stirling_correction(double a) {
  // B_2k / (2k (2k - 1)), k = 8 down to 1.
  const double c[] = {-3617.0 / 122400.0, 1.0 / 156.0,  -691.0 / 360360.0, 1.0 / 1188.0,
                      -1.0 / 1680.0,      1.0 / 1260.0, -1.0 / 360.0,      1.0 / 12.0};
  const double z = 1.0 / (a * a);
  double sum = 0.0;
  for (double ck : c) sum = sum * z + ck;
  return sum / a;
}

// log(x^a e^-x / Gamma(a)), the factor both expansions share. For large a the
// naive form loses digits to cancellation; with Stirling's series it is
// a (log(x/a) - t) + log(a / 2 pi) / 2 - stirling_correction(a), t = (x - a) / a,
// where log(x/a) - t = log1pmx(t) when t is small.
FLB_HD inline double log_prefactor(double a, double x) {
  if (a < 10.0) {
    return a * log(x) - x - lgamma(a);
  }
  const double t = (x - a) / a;
  const double main = fabs(t) <= 0.25 ? a * log1pmx(t) : a * log(x / a) - (x - a);
  return main + 0.5 * log(a / (2.0 * kPi)) - stirling_correction(a);
}

// P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1) ... (a+k)).
FLB_HD inline double lower_series(double a, double x) {
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term <= kEps * sum) break;
  }
  return exp(log_prefactor(a, x)) * sum / a;
}

// Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) /
// (x + 5 - a - ...))), evaluated forwards by the modified Lentz method.
FLB_HD inline double upper_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (fabs(delta - 1.0) <= kEps) break;
  }
  return exp(log_prefactor(a, x)) * h;
}

// Temme's expansion: with lambda = x / a, d = lambda - 1 and
// eta = sign(d) sqrt(2 (lambda - 1 - log lambda)),
// Q = erfc(eta sqrt(a/2)) / 2 + R, P = erfc(-eta sqrt(a/2)) / 2 - R, where
// R = exp(-a eta^2 / 2) / sqrt(2 pi a) (c_0 + c_1 / a),
// c_0 = 1/d - 1/eta and c_1 = 1/eta^3 - 1/d^3 - 1/d^2 - 1/(12 d). Near d = 0 those
// cancel; there their Taylor series in d are used.
FLB_HD inline double temme(double a, double x, bool upper) {
  const double d = (x - a) / a;
  const double eta = copysign(sqrt(-2.0 * log1pmx(d)), d);
  double c0, c1;
  if (fabs(d) < 0.01) {
    const double t0[] = {-1.0 / 3.0,         1.0 / 12.0,           -23.0 / 540.0,
                         353.0 / 12960.0,    -589.0 / 30240.0,     81083.0 / 5443200.0,
                         -7783.0 / 653184.0, 514303.0 / 52254720.0};
    const double t1[] = {-1.0 / 540.0,        -1.0 / 288.0,       23.0 / 6048.0,
                         -3733.0 / 1088640.0, 3253.0 / 1088640.0, -135719.0 / 52254720.0};
    c0 = c1 = 0.0;
    for (int k = 7; k >= 0; --k) c0 = c0 * d + t0[k];
    for (int k = 5; k >= 0; --k) c1 = c1 * d + t1[k];
  } else {
    c0 = 1.0 / d - 1.0 / eta;
    c1 = 1.0 / (eta * eta * eta) - 1.0 / (d * d * d) - 1.0 / (d * d) - 1.0 / (12.0 * d);
  }
  const double r = exp(-0.5 * a * eta * eta) / sqrt(2.0 * kPi * a) * (c0 + c1 / a);
  const double z = eta * sqrt(a / 2.0);
  return upper ? 0.5 * erfc(z) + r : 0.5 * erfc(-z) - r;
}

// P(a, x) (upper = false) or Q(a, x) (upper = true), with PyTorch's values at the
// edges: NaN for a < 0 or x < 0 or at a = x = 0 or a = x = inf; P(0, x) = 1 for x > 0,
// P(a, 0) = 0, P(inf, x) = 0 and P(a, inf) = 1 otherwise.
FLB_HD inline double incomplete_gamma(double a, double x, bool upper) {
  const double nan = kSpecialNaN;
  const double inf = kSpecialInf;
  if (isnan(a) || isnan(x) || a < 0.0 || x < 0.0) return nan;
  auto result = [upper](double p) { return upper ? 1.0 - p : p; };
  if (a == 0.0) return x > 0.0 ? result(1.0) : nan;
  if (x == 0.0) return result(0.0);
  if (a == inf) return x == inf ? nan : result(0.0);
  if (x == inf) return result(1.0);
  if (a > 1e5 && fabs(x - a) < 0.3 * a) return temme(a, x, upper);
  if (x < a + 1.0) {
    const double p = lower_series(a, x);
    return upper ? 1.0 - p : p;
  }
  const double q = upper_fraction(a, x);
  return upper ? q : 1.0 - q;
}

}  // namespace gamma_detail

FLB_HD inline double igamma(double a, double x) {
  return gamma_detail::incomplete_gamma(a, x, false);
}
FLB_HD inline double igammac(double a, double x) {
  return gamma_detail::incomplete_gamma(a, x, true);
}

// ---- from the CPU's cpu/special_polynomials.h ----
namespace poly_detail {

constexpr double kNaN = kSpecialNaN;
constexpr double kInf = kSpecialInf;
// Up to this degree Chebyshev polynomials use the recurrence (exact for small
// integer arguments), above it the closed forms.
constexpr double kChebyshevRecurrenceDegree = 64;
// Recurrences stop at this degree: where the values stay bounded (Legendre on
// [-1, 1], Laguerre for small x >= 0) a larger degree would take seconds per
// element, and such degrees give NaN. Where the values grow, they overflow long
// before it.
constexpr double kMaxRecurrenceDegree = 1 << 24;

FLB_HD inline bool is_odd(double n) { return fmod(n, 2.0) != 0.0; }

// The shared preamble: NaN, negative degrees and degree 0. Sets n to the
// truncated degree; returns true (with the value in *out) when that settles it.
FLB_HD inline bool trivial(double x, double& n, double* out) {
  if (isnan(x) || isnan(n)) return *out = kNaN, true;
  n = trunc(n);
  if (n < 0) return *out = 0.0, true;
  if (n == 0) return *out = 1.0, true;
  return false;
}

// +-inf for p_n(+-inf): the sign of lead * x^n (lead is the leading coefficient's sign).
FLB_HD inline double at_infinity(double x, double n, double lead) {
  return (x < 0 && is_odd(n)) ? -lead * kInf : lead * kInf;
}

// p_n(x) from p_0 = 1, p_1 and p_{k+1} = next(k, p_k, p_{k-1}), for n >= 1. A value
// that overflows before degree n leaves the result's sign unknown: NaN.
template <class Next>
FLB_HD double recurrence(double n, double p1, const Next& next) {
  if (n > kMaxRecurrenceDegree) return kNaN;
  double prev = 1.0, cur = p1;
  const int64_t degree = static_cast<int64_t>(n);
  for (int64_t k = 1; k < degree; ++k) {
    const double following = next(static_cast<double>(k), cur, prev);
    prev = cur;
    cur = following;
    if (!isfinite(cur)) return k + 1 == degree ? cur : kNaN;
  }
  return cur;
}

// The four kinds of Chebyshev polynomials share the recurrence
// p_{k+1} = 2x p_k - p_{k-1}, from p_1 = 2x - shift with shift T: x (p_1 = x),
// U: 0, V: 1, W: -1.
enum class Kind { T, U, V, W };

FLB_HD inline double chebyshev(Kind kind, double x, double n) {
  double value;
  if (trivial(x, n, &value)) return value;
  if (isinf(x)) return at_infinity(x, n, 1.0);
  if (n <= kChebyshevRecurrenceDegree) {
    const double p1 = kind == Kind::T   ? x
                      : kind == Kind::U ? 2.0 * x
                      : kind == Kind::V ? 2.0 * x - 1.0
                                        : 2.0 * x + 1.0;
    return recurrence(n, p1, [x](double, double p, double q) { return 2.0 * x * p - q; });
  }
  // Closed forms. With x = cos(t) on (-1, 1): T = cos(n t), U = sin((n+1) t) / sin(t),
  // V = cos((n+1/2) t) / cos(t/2), W = sin((n+1/2) t) / sin(t/2); for x > 1 the same
  // with cosh and sinh of t = acosh(x). Negative x > 1 in size by parity:
  // T, U: p_n(-x) = (-1)^n p_n(x); V_n(-x) = (-1)^n W_n(x) and W_n(-x) = (-1)^n V_n(x).
  const double sign = is_odd(n) ? -1.0 : 1.0;
  if (x == 1.0 || x == -1.0) {
    const double s = x < 0 ? sign : 1.0;
    switch (kind) {
      case Kind::T:
        return s;
      case Kind::U:
        return s * (n + 1.0);
      case Kind::V:
        return x > 0 ? 1.0 : sign * (2.0 * n + 1.0);
      case Kind::W:
        return x > 0 ? 2.0 * n + 1.0 : sign;
    }
  }
  if (fabs(x) < 1.0) {
    const double t = acos(x);
    switch (kind) {
      case Kind::T:
        return cos(n * t);
      case Kind::U:
        return sin((n + 1.0) * t) / sqrt((1.0 - x) * (1.0 + x));
      case Kind::V:
        return cos((n + 0.5) * t) / sqrt((1.0 + x) / 2.0);
      case Kind::W:
        return sin((n + 0.5) * t) / sqrt((1.0 - x) / 2.0);
    }
  }
  const double a = fabs(x), t = acosh(a);
  const double s = x < 0 ? sign : 1.0;
  // For x < -1 V and W swap (see above).
  const bool cosine_form = kind == Kind::T || (kind == Kind::V) == (x > 0);
  switch (kind) {
    case Kind::T:
      return s * cosh(n * t);
    case Kind::U:
      return s * sinh((n + 1.0) * t) / sinh(t);
    case Kind::V:
    case Kind::W:
      return cosine_form ? s * cosh((n + 0.5) * t) / cosh(t / 2.0)
                         : s * sinh((n + 0.5) * t) / sinh(t / 2.0);
  }
  return kNaN;
}

// The loops libstdc++'s std::hermite and std::legendre evaluate (the CPU kernels
// call those, which device code cannot): H_i = 2x H_{i-1} - 2(i-1) H_{i-2}, and
// P_l = 2x P_{l-1} - P_{l-2} - (x P_{l-1} - P_{l-2}) / l with P(+-1) exact.
FLB_HD inline double hermite_h(unsigned n, double x) {
  if (n == 0) return 1.0;
  double prev = 1.0, cur = 2.0 * x;
  for (unsigned i = 2; i <= n; ++i) {
    const double next = 2.0 * x * cur - 2.0 * (i - 1) * prev;
    prev = cur;
    cur = next;
  }
  return cur;
}
FLB_HD inline double legendre_p(unsigned l, double x) {
  if (x == 1.0) return 1.0;
  if (x == -1.0) return l % 2 == 1 ? -1.0 : 1.0;
  if (l == 0) return 1.0;
  double prev = 1.0, cur = x;
  for (unsigned ll = 2; ll <= l; ++ll) {
    const double next = 2.0 * x * cur - prev - (x * cur - prev) / ll;
    prev = cur;
    cur = next;
  }
  return cur;
}

}  // namespace poly_detail

FLB_HD inline double chebyshev_polynomial_t(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::T, x, n);
}
FLB_HD inline double chebyshev_polynomial_u(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::U, x, n);
}
FLB_HD inline double chebyshev_polynomial_v(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::V, x, n);
}
FLB_HD inline double chebyshev_polynomial_w(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::W, x, n);
}

// Shifted Chebyshev polynomials: p*_n(x) = p_n(2x - 1), orthogonal on [0, 1].
FLB_HD inline double shifted_chebyshev_polynomial_t(double x, double n) {
  return chebyshev_polynomial_t(2.0 * x - 1.0, n);
}
FLB_HD inline double shifted_chebyshev_polynomial_u(double x, double n) {
  return chebyshev_polynomial_u(2.0 * x - 1.0, n);
}
FLB_HD inline double shifted_chebyshev_polynomial_v(double x, double n) {
  return chebyshev_polynomial_v(2.0 * x - 1.0, n);
}
FLB_HD inline double shifted_chebyshev_polynomial_w(double x, double n) {
  return chebyshev_polynomial_w(2.0 * x - 1.0, n);
}

// Physicists' Hermite polynomials (the recurrence std::hermite evaluates, see hermite_h): H_{k+1} =
// 2x H_k - 2k H_{k-1}, H_1 = 2x. Beyond degree 1000 every value overflows (|H_n| grows like
// sqrt(2^n n!)).
FLB_HD inline double hermite_polynomial_h(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (isinf(x)) return at_infinity(x, n, 1.0);
  if (n > 1000) return kNaN;
  return poly_detail::hermite_h(static_cast<unsigned>(n), x);
}

// Probabilists' Hermite polynomials: He_{k+1} = x He_k - k He_{k-1}, He_1 = x.
FLB_HD inline double hermite_polynomial_he(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (isinf(x)) return at_infinity(x, n, 1.0);
  return recurrence(n, x, [x](double k, double p, double q) { return x * p - k * q; });
}

// Laguerre polynomials: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}, L_1 = 1 - x;
// the leading term is (-x)^n / n!. (std::laguerre rejects x < 0.)
FLB_HD inline double laguerre_polynomial_l(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (isinf(x)) return at_infinity(-x, n, 1.0);
  return recurrence(n, 1.0 - x, [x](double k, double p, double q) {
    return ((2.0 * k + 1.0 - x) * p - k * q) / (k + 1.0);
  });
}

// Legendre polynomials: on [-1, 1] the recurrence std::legendre evaluates (see
// legendre_p); outside it (which std::legendre rejects) the recurrence (k+1) P_{k+1} = (2k+1) x P_k
// - k P_{k-1}, P_1 = x.
FLB_HD inline double legendre_polynomial_p(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (isinf(x)) return at_infinity(x, n, 1.0);
  if (fabs(x) <= 1.0) {
    if (n > kMaxRecurrenceDegree) return kNaN;
    return poly_detail::legendre_p(static_cast<unsigned>(n), x);
  }
  return recurrence(n, x, [x](double k, double p, double q) {
    return ((2.0 * k + 1.0) * x * p - k * q) / (k + 1.0);
  });
}

// -x log(x), 0 at 0, -inf for x < 0 (special_entr, from cpu/special_kernels.cpp).
FLB_HD inline double entr(double x) {
  if (isnan(x)) return x;
  if (x > 0) return -x * log(x);
  return x == 0 ? 0.0 : -kSpecialInf;
}

// ---- the modified Bessel functions I_0 and I_1 (cpu/special_bessel.h) ----
// The CPU takes moderate arguments (1e-8 <= x < 20) from libstdc++'s
// std::cyl_bessel_i; here the power series I_nu(x) = (x/2)^nu sum_k (x^2/4)^k /
// (k! (k + nu)!) takes them (positive terms: no cancellation, within a few ulp of
// it). Tiny and large arguments as the CPU: the series' leading terms, and Hankel's
// expansion.
namespace bessel_detail {

constexpr double kPi = 3.14159265358979323846;
// Below this the power series' leading terms are exact in double precision.
constexpr double kTiny = 1e-8;
// From here on Hankel's expansion converges to double precision.
constexpr double kLarge = 20.0;

// Hankel's expansion of the scaled functions: e^-x I_nu(x) ~ sum_k (-1)^k a_k(nu) /
// x^k / sqrt(2 pi x), a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j - 1)^2) / (k! 8^k),
// stopped at its smallest term.
FLB_HD inline double hankel_sum(double nu, double x, double sign) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100; ++k) {
    const double odd = 2.0 * k - 1.0;
    const double next = term * sign * (mu - odd * odd) / (8.0 * k * x);
    if (fabs(next) >= fabs(term)) break;
    term = next;
    sum += term;
    if (fabs(term) < 1e-17 * fabs(sum)) break;
  }
  return sum;
}

FLB_HD inline double scaled_i_large(double nu, double x) {
  return hankel_sum(nu, x, -1.0) / sqrt(2.0 * kPi * x);
}

// I_0(x) ~ 1 + x^2/4 and I_1(x) ~ x/2 (1 + x^2/8) for tiny x >= 0.
FLB_HD inline double bessel_i_tiny(double nu, double x) {
  return nu == 0 ? 1.0 + x * x / 4 : x / 2 * (1.0 + x * x / 8);
}

// I_nu(x) for nu 0 or 1 and kTiny <= x < kLarge, from the power series.
FLB_HD inline double bessel_i_series(double nu, double x) {
  const double q = x * x / 4.0;
  double term = nu == 0 ? 1.0 : x / 2.0, sum = term;
  for (int k = 1; k < 200; ++k) {
    term *= q / (k * (k + nu));
    sum += term;
    if (term <= 1e-17 * sum) break;
  }
  return sum;
}

// I_n(x) for x >= 0 and order 0 or 1.
FLB_HD inline double bessel_i(double nu, double x) {
  if (isnan(x) || isinf(x)) return kSpecialNaN;  // as PyTorch and SciPy
  if (x < kTiny) return bessel_i_tiny(nu, x);
  if (x < kLarge) return bessel_i_series(nu, x);
  const double half = exp(x / 2);  // e^x in two halves: I_nu overflows later than e^x
  return scaled_i_large(nu, x) * half * half;
}

// e^-x I_n(x) for x >= 0 (NaN stays NaN, 0 at inf).
FLB_HD inline double bessel_i_scaled(double nu, double x) {
  if (isnan(x)) return x;
  if (x < kTiny) return bessel_i_tiny(nu, x) * exp(-x);
  if (x < kLarge) return bessel_i_series(nu, x) * exp(-x);
  return scaled_i_large(nu, x);
}

}  // namespace bessel_detail

// I_0 is even, I_1 odd; the scaled forms are e^-|x| I_n(x).
FLB_HD inline double modified_bessel_i0(double x) { return bessel_detail::bessel_i(0.0, fabs(x)); }
FLB_HD inline double modified_bessel_i1(double x) {
  const double i = bessel_detail::bessel_i(1.0, fabs(x));
  return x < 0 ? -i : i;
}
FLB_HD inline double bessel_i0e(double x) { return bessel_detail::bessel_i_scaled(0.0, fabs(x)); }
FLB_HD inline double bessel_i1e(double x) {
  const double i = bessel_detail::bessel_i_scaled(1.0, fabs(x));
  return x < 0 ? -i : i;
}

// spherical_bessel_j0(x) = sin(x) / x (cpu/special_bessel.h; plain libm).
FLB_HD inline double spherical_bessel_j0(double x) {
  if (isinf(x)) return 0.0;
  if (x == 0) return 1.0;
  return sin(x) / x;
}

// The multivariate log-gamma function of dimension p (cpu/special_kernels.cpp):
// sum_{i < p} lgamma(x - i/2) + p (p - 1) / 4 log(pi).
FLB_HD inline double mvlgamma(double x, int64_t p) {
  const double log_pi = 1.14472988584940017414;
  double sum = static_cast<double>(p) * static_cast<double>(p - 1) / 4.0 * log_pi;
  for (int64_t i = 0; i < p; ++i) sum += lgamma(x - static_cast<double>(i) / 2.0);
  return sum;
}

}  // namespace flambeau::cuda::kernels::special
