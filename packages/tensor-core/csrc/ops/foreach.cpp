// Frontends of the multi-tensor (_foreach_*) operators. Each list element runs
// the fused kernel (ops/foreach_kernel.h) when its operands are contiguous
// float32/float64 of one shape; anything else (other dtypes, strides,
// broadcasting, complex scalars) goes through the elementwise operators, so the
// results, promotion and errors are theirs.
#include <algorithm>

#include "generated/kernels.h"
#include "generated/ops_foreach.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_tensor.h"
#include "ops/foreach_kernel.h"

namespace flambeau::ops {

namespace {

using TensorList = std::vector<Tensor>;
using ScalarList = std::vector<Scalar>;

void check_nonempty(const char* op, const TensorList& self) {
  FLB_CHECK(!self.empty(), op, ": Tensor list must have at least one tensor.");
}

void check_lengths(const char* op, size_t n, size_t m) {
  FLB_CHECK(n == m, op, ": Tensor lists must have the same number of tensors, got ", n, " and ", m,
            ".");
}

void check_scalars(const char* op, size_t n, size_t m) {
  FLB_CHECK(n == m, op, ": Tensor list must have same number of elements as scalar list, got ", n,
            " tensors and ", m, " scalars.");
}

bool same_sizes(IntList a, IntList b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The operands one fused pass reads: tensors b, c (or null) and the scalar s0.
struct Operands {
  const Tensor* b = nullptr;
  const Tensor* c = nullptr;
  const Scalar* s0 = nullptr;
  double s1 = 1.0;
};

// Whether the fused pass runs on device d: the CPU's, or a plugin's that provides it.
bool has_fused_pass(Device d) {
  if (d.is_cpu()) return true;
  const OperatorEntry& op = handle<kernels::_foreach>().entry();
  const auto i = static_cast<size_t>(d.type);
  return op.kernels[i] != nullptr || op.foreign[i] != nullptr;
}

bool fusable(const Tensor& a, const Operands& x) {
  ScalarType t = a->dtype();
  if (!a->is_contiguous() || !has_fused_pass(a->device())) return false;
  if (t != ScalarType::Float32 && t != ScalarType::Float64) return false;
  if (x.s0 && x.s0->is_complex()) return false;
  for (const Tensor* o : {x.b, x.c}) {
    if (o && ((*o)->dtype() != t || !(*o)->is_contiguous() || (*o)->device() != a->device() ||
              !same_sizes((*o)->sizes(), a->sizes())))
      return false;
  }
  return true;
}

// One list element: the fused pass when the operands allow it, else `slow`
// (the elementwise operators) writing to `out`.
template <class Slow>
Tensor apply_one(ForeachOp op, bool inplace, const Tensor& a, const Operands& x, const Slow& slow) {
  if (fusable(a, x)) {
    Tensor out = inplace ? a : empty(a->sizes(), a->dtype(), a->device());
    if (inplace) a->bump_version();
    kernel<kernels::_foreach>(a->device())(op, out, a, x.b, x.c, x.s0 ? x.s0->to_double() : 0.0,
                                           x.s1);
    return out;
  }
  return slow(inplace ? OutArg::self(a) : OutArg::none());
}

// Applies f(i) -> Tensor over the list and collects the results.
template <class F>
TensorList map(const TensorList& self, const F& f) {
  TensorList out;
  out.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) out.push_back(f(i));
  return out;
}

// Scalar and ScalarList forms of a binary operator: `scalar_at(i)` gives the
// scalar of element i; `fused` the kernel op and the scalar it reads (sub
// negates); `slow(a, s, out)` the elementwise fallback.
template <class At, class Slow>
TensorList binary_scalars(const char* name, ForeachOp op, bool negate, bool inplace,
                          const TensorList& self, const At& scalar_at, const Slow& slow) {
  check_nonempty(name, self);
  return map(self, [&](size_t i) {
    const Scalar& s = scalar_at(i);
    Scalar fused = negate && !s.is_complex() ? Scalar(-s.to_double()) : s;
    Operands x;
    x.s0 = &fused;
    return apply_one(op, inplace, self[i], x,
                     [&](const OutArg& out) { return slow(self[i], wrapped_scalar(s), out); });
  });
}

template <class Slow>
TensorList binary_lists(const char* name, ForeachOp op, double alpha, bool inplace,
                        const TensorList& self, const TensorList& other, const Slow& slow) {
  check_nonempty(name, self);
  check_lengths(name, self.size(), other.size());
  return map(self, [&](size_t i) {
    Operands x;
    x.b = &other[i];
    x.s1 = alpha;
    return apply_one(op, inplace, self[i], x,
                     [&](const OutArg& out) { return slow(self[i], other[i], out); });
  });
}

template <class Slow>
TensorList unary(const char* name, ForeachOp op, bool inplace, const TensorList& self,
                 const Slow& slow) {
  check_nonempty(name, self);
  return map(self, [&](size_t i) {
    return apply_one(op, inplace, self[i], Operands{},
                     [&](const OutArg& out) { return slow(self[i], out); });
  });
}

// addcmul / addcdiv: self[i] + value_at(i) * (t1[i] op t2[i]).
template <class At, class Slow>
TensorList pointwise3(const char* name, ForeachOp op, bool inplace, const TensorList& self,
                      const TensorList& t1, const TensorList& t2, const At& value_at,
                      const Slow& slow) {
  check_nonempty(name, self);
  check_lengths(name, self.size(), t1.size());
  check_lengths(name, self.size(), t2.size());
  return map(self, [&](size_t i) {
    const Scalar& v = value_at(i);
    Operands x;
    x.b = &t1[i];
    x.c = &t2[i];
    x.s0 = &v;
    return apply_one(op, inplace, self[i], x,
                     [&](const OutArg& out) { return slow(self[i], t1[i], t2[i], v, out); });
  });
}

// The values of a 1-D tensor of scalars (the .Tensor overloads).
ScalarList scalars_of(const char* name, const Tensor& t) {
  FLB_CHECK(t->dim() == 1, name, ": scalars must be a 1-D tensor, got a tensor of shape ",
            shape_str(t->sizes()));
  FLB_CHECK(!is_complex(t->dtype()), name, ": scalars must be a real tensor");
  Tensor d = empty(t->sizes(), ScalarType::Float64);
  copy_into(d, t);
  ScalarList out;
  for (int64_t i = 0; i < d->numel(); ++i) out.emplace_back(d->data_as<double>()[i]);
  return out;
}

// Slow paths shared by several operators.

Tensor slow_add(const Tensor& a, const Tensor& b, const OutArg& o) { return add(a, b, 1, o); }
Tensor slow_sub(const Tensor& a, const Tensor& b, const OutArg& o) { return sub(a, b, 1, o); }
Tensor slow_div(const Tensor& a, const Tensor& b, const OutArg& o) {
  return div(a, b, std::nullopt, o);
}
Tensor slow_mul(const Tensor& a, const Tensor& b, const OutArg& o) { return mul(a, b, o); }
Tensor slow_maximum(const Tensor& a, const Tensor& b, const OutArg& o) { return maximum(a, b, o); }
Tensor slow_minimum(const Tensor& a, const Tensor& b, const OutArg& o) { return minimum(a, b, o); }
Tensor slow_clamp_min(const Tensor& a, const Tensor& b, const OutArg& o) {
  return clamp_min(a, b, o);
}
Tensor slow_clamp_max(const Tensor& a, const Tensor& b, const OutArg& o) {
  return clamp_max(a, b, o);
}
Tensor slow_pow(const Tensor& a, const Tensor& b, const OutArg& o) { return pow(a, b, o); }
Tensor slow_addcmul(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& v,
                    const OutArg& o) {
  return addcmul(a, b, c, v, o);
}
Tensor slow_addcdiv(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& v,
                    const OutArg& o) {
  return addcdiv(a, b, c, v, o);
}
Tensor slow_sqrt(const Tensor& a, const OutArg& o) { return sqrt(a, o); }
Tensor slow_neg(const Tensor& a, const OutArg& o) { return neg(a, o); }
Tensor slow_abs(const Tensor& a, const OutArg& o) { return abs(a, o); }
Tensor slow_exp(const Tensor& a, const OutArg& o) { return exp(a, o); }
Tensor slow_sign(const Tensor& a, const OutArg& o) { return sign(a, o); }
Tensor slow_reciprocal(const Tensor& a, const OutArg& o) { return reciprocal(a, o); }

}  // namespace

// Every operator comes as an out-of-place function returning the results and an
// in-place one (trailing _, cpp name `_foreach_<op>__<overload>`) returning none.
#define FLB_FOREACH_SCALAR(NAME, OP, NEGATE, SLOW)                                    \
  TensorList _foreach_##NAME##_Scalar(const TensorList& self, const Scalar& scalar) { \
    return binary_scalars(                                                            \
        "_foreach_" #NAME, OP, NEGATE, false, self,                                   \
        [&](size_t) -> const Scalar& { return scalar; }, SLOW);                       \
  }                                                                                   \
  void _foreach_##NAME##__Scalar(const TensorList& self, const Scalar& scalar) {      \
    binary_scalars(                                                                   \
        "_foreach_" #NAME "_", OP, NEGATE, true, self,                                \
        [&](size_t) -> const Scalar& { return scalar; }, SLOW);                       \
  }
#define FLB_FOREACH_SCALARLIST(NAME, OP, NEGATE, SLOW, PARAM)                                \
  TensorList _foreach_##NAME##_ScalarList(const TensorList& self, const ScalarList& PARAM) { \
    check_scalars("_foreach_" #NAME, self.size(), PARAM.size());                             \
    return binary_scalars(                                                                   \
        "_foreach_" #NAME, OP, NEGATE, false, self,                                          \
        [&](size_t i) -> const Scalar& { return PARAM[i]; }, SLOW);                          \
  }                                                                                          \
  void _foreach_##NAME##__ScalarList(const TensorList& self, const ScalarList& PARAM) {      \
    check_scalars("_foreach_" #NAME "_", self.size(), PARAM.size());                         \
    binary_scalars(                                                                          \
        "_foreach_" #NAME "_", OP, NEGATE, true, self,                                       \
        [&](size_t i) -> const Scalar& { return PARAM[i]; }, SLOW);                          \
  }
#define FLB_FOREACH_LIST(NAME, OP, SLOW)                                               \
  TensorList _foreach_##NAME##_List(const TensorList& self, const TensorList& other) { \
    return binary_lists("_foreach_" #NAME, OP, 1.0, false, self, other, SLOW);         \
  }                                                                                    \
  void _foreach_##NAME##__List(const TensorList& self, const TensorList& other) {      \
    binary_lists("_foreach_" #NAME "_", OP, 1.0, true, self, other, SLOW);             \
  }
#define FLB_FOREACH_UNARY(NAME, OP, SLOW)                   \
  TensorList _foreach_##NAME(const TensorList& self) {      \
    return unary("_foreach_" #NAME, OP, false, self, SLOW); \
  }                                                         \
  void _foreach_##NAME##_(const TensorList& self) {         \
    unary("_foreach_" #NAME "_", OP, true, self, SLOW);     \
  }

// add / sub: Scalar, List (with alpha), ScalarList.
FLB_FOREACH_SCALAR(add, ForeachOp::kAddScalar, false, slow_add)
FLB_FOREACH_SCALAR(sub, ForeachOp::kAddScalar, true, slow_sub)
FLB_FOREACH_SCALARLIST(add, ForeachOp::kAddScalar, false, slow_add, scalars)
FLB_FOREACH_SCALARLIST(sub, ForeachOp::kAddScalar, true, slow_sub, scalars)

TensorList _foreach_add_List(const TensorList& self, const TensorList& other, const Scalar& alpha) {
  return binary_lists("_foreach_add", ForeachOp::kAddTensor, alpha.to_double(), false, self, other,
                      [&](auto& a, auto& b, auto& o) { return add(a, b, alpha, o); });
}
void _foreach_add__List(const TensorList& self, const TensorList& other, const Scalar& alpha) {
  binary_lists("_foreach_add_", ForeachOp::kAddTensor, alpha.to_double(), true, self, other,
               [&](auto& a, auto& b, auto& o) { return add(a, b, alpha, o); });
}
TensorList _foreach_sub_List(const TensorList& self, const TensorList& other, const Scalar& alpha) {
  return binary_lists("_foreach_sub", ForeachOp::kAddTensor, -alpha.to_double(), false, self, other,
                      [&](auto& a, auto& b, auto& o) { return sub(a, b, alpha, o); });
}
void _foreach_sub__List(const TensorList& self, const TensorList& other, const Scalar& alpha) {
  binary_lists("_foreach_sub_", ForeachOp::kAddTensor, -alpha.to_double(), true, self, other,
               [&](auto& a, auto& b, auto& o) { return sub(a, b, alpha, o); });
}

// mul / div: Scalar, List, ScalarList, Tensor.
FLB_FOREACH_SCALAR(mul, ForeachOp::kMulScalar, false, slow_mul)
FLB_FOREACH_SCALAR(div, ForeachOp::kDivScalar, false, slow_div)
FLB_FOREACH_SCALARLIST(mul, ForeachOp::kMulScalar, false, slow_mul, scalars)
FLB_FOREACH_SCALARLIST(div, ForeachOp::kDivScalar, false, slow_div, scalars)
FLB_FOREACH_LIST(mul, ForeachOp::kMulTensor, slow_mul)
FLB_FOREACH_LIST(div, ForeachOp::kDivTensor, slow_div)

#define FLB_FOREACH_TENSOR(NAME, SLOW)                                                \
  TensorList _foreach_##NAME##_Tensor(const TensorList& self, const Tensor& other) {  \
    check_nonempty("_foreach_" #NAME, self);                                          \
    return map(self, [&](size_t i) { return SLOW(self[i], other, OutArg::none()); }); \
  }                                                                                   \
  void _foreach_##NAME##__Tensor(const TensorList& self, const Tensor& other) {       \
    check_nonempty("_foreach_" #NAME "_", self);                                      \
    for (const Tensor& t : self) SLOW(t, other, OutArg::self(t));                     \
  }
FLB_FOREACH_TENSOR(mul, slow_mul)
FLB_FOREACH_TENSOR(div, slow_div)

// maximum / minimum / clamp_min / clamp_max: Scalar, List (NaN propagates).
FLB_FOREACH_SCALAR(maximum, ForeachOp::kMaxScalar, false, slow_maximum)
FLB_FOREACH_SCALAR(minimum, ForeachOp::kMinScalar, false, slow_minimum)
FLB_FOREACH_SCALAR(clamp_min, ForeachOp::kMaxScalar, false, slow_clamp_min)
FLB_FOREACH_SCALAR(clamp_max, ForeachOp::kMinScalar, false, slow_clamp_max)
FLB_FOREACH_LIST(maximum, ForeachOp::kMaxTensor, slow_maximum)
FLB_FOREACH_LIST(minimum, ForeachOp::kMinTensor, slow_minimum)
FLB_FOREACH_LIST(clamp_min, ForeachOp::kMaxTensor, slow_clamp_min)
FLB_FOREACH_LIST(clamp_max, ForeachOp::kMinTensor, slow_clamp_max)

// pow: Scalar, List, ScalarList exponents, and a scalar base.
TensorList _foreach_pow_Scalar(const TensorList& self, const Scalar& exponent) {
  return binary_scalars(
      "_foreach_pow", ForeachOp::kPowScalar, false, false, self,
      [&](size_t) -> const Scalar& { return exponent; }, slow_pow);
}
void _foreach_pow__Scalar(const TensorList& self, const Scalar& exponent) {
  binary_scalars(
      "_foreach_pow_", ForeachOp::kPowScalar, false, true, self,
      [&](size_t) -> const Scalar& { return exponent; }, slow_pow);
}
FLB_FOREACH_SCALARLIST(pow, ForeachOp::kPowScalar, false, slow_pow, exponent)
FLB_FOREACH_LIST(pow, ForeachOp::kPowTensor, slow_pow)

TensorList _foreach_pow_ScalarAndTensor(const Scalar& self, const TensorList& exponent) {
  return binary_scalars(
      "_foreach_pow", ForeachOp::kRPowScalar, false, false, exponent,
      [&](size_t) -> const Scalar& { return self; },
      [&](const Tensor& e, const Tensor& s, const OutArg& o) { return pow(s, e, o); });
}

// addcmul / addcdiv: Scalar value, ScalarList, Tensor of scalars.
#define FLB_FOREACH_POINTWISE3(NAME, OP, SLOW)                                                    \
  TensorList _foreach_##NAME##_Scalar(const TensorList& self, const TensorList& tensor1,          \
                                      const TensorList& tensor2, const Scalar& value) {           \
    return pointwise3(                                                                            \
        "_foreach_" #NAME, OP, false, self, tensor1, tensor2,                                     \
        [&](size_t) -> const Scalar& { return value; }, SLOW);                                    \
  }                                                                                               \
  void _foreach_##NAME##__Scalar(const TensorList& self, const TensorList& tensor1,               \
                                 const TensorList& tensor2, const Scalar& value) {                \
    pointwise3(                                                                                   \
        "_foreach_" #NAME "_", OP, true, self, tensor1, tensor2,                                  \
        [&](size_t) -> const Scalar& { return value; }, SLOW);                                    \
  }                                                                                               \
  TensorList _foreach_##NAME##_ScalarList(const TensorList& self, const TensorList& tensor1,      \
                                          const TensorList& tensor2, const ScalarList& scalars) { \
    check_scalars("_foreach_" #NAME, self.size(), scalars.size());                                \
    return pointwise3(                                                                            \
        "_foreach_" #NAME, OP, false, self, tensor1, tensor2,                                     \
        [&](size_t i) -> const Scalar& { return scalars[i]; }, SLOW);                             \
  }                                                                                               \
  void _foreach_##NAME##__ScalarList(const TensorList& self, const TensorList& tensor1,           \
                                     const TensorList& tensor2, const ScalarList& scalars) {      \
    check_scalars("_foreach_" #NAME "_", self.size(), scalars.size());                            \
    pointwise3(                                                                                   \
        "_foreach_" #NAME "_", OP, true, self, tensor1, tensor2,                                  \
        [&](size_t i) -> const Scalar& { return scalars[i]; }, SLOW);                             \
  }                                                                                               \
  TensorList _foreach_##NAME##_Tensor(const TensorList& self, const TensorList& tensor1,          \
                                      const TensorList& tensor2, const Tensor& scalars) {         \
    return _foreach_##NAME##_ScalarList(self, tensor1, tensor2,                                   \
                                        scalars_of("_foreach_" #NAME, scalars));                  \
  }                                                                                               \
  void _foreach_##NAME##__Tensor(const TensorList& self, const TensorList& tensor1,               \
                                 const TensorList& tensor2, const Tensor& scalars) {              \
    _foreach_##NAME##__ScalarList(self, tensor1, tensor2,                                         \
                                  scalars_of("_foreach_" #NAME "_", scalars));                    \
  }
FLB_FOREACH_POINTWISE3(addcmul, ForeachOp::kAddcmul, slow_addcmul)
FLB_FOREACH_POINTWISE3(addcdiv, ForeachOp::kAddcdiv, slow_addcdiv)

// lerp: Scalar weight or a list of weight tensors.
TensorList lerp_scalar(const char* name, bool inplace, const TensorList& self,
                       const TensorList& ends, const Scalar& weight) {
  check_nonempty(name, self);
  check_lengths(name, self.size(), ends.size());
  return map(self, [&](size_t i) {
    Operands x;
    x.b = &ends[i];
    x.s0 = &weight;
    return apply_one(ForeachOp::kLerpScalar, inplace, self[i], x, [&](const OutArg& o) {
      return lerp(self[i], ends[i], wrapped_scalar(weight), o);
    });
  });
}
TensorList lerp_list(const char* name, bool inplace, const TensorList& self, const TensorList& ends,
                     const TensorList& weights) {
  check_nonempty(name, self);
  check_lengths(name, self.size(), ends.size());
  check_lengths(name, self.size(), weights.size());
  return map(self, [&](size_t i) {
    Operands x;
    x.b = &ends[i];
    x.c = &weights[i];
    return apply_one(ForeachOp::kLerpTensor, inplace, self[i], x,
                     [&](const OutArg& o) { return lerp(self[i], ends[i], weights[i], o); });
  });
}
TensorList _foreach_lerp_Scalar(const TensorList& self, const TensorList& tensors1,
                                const Scalar& weight) {
  return lerp_scalar("_foreach_lerp", false, self, tensors1, weight);
}
void _foreach_lerp__Scalar(const TensorList& self, const TensorList& tensors1,
                           const Scalar& weight) {
  lerp_scalar("_foreach_lerp_", true, self, tensors1, weight);
}
TensorList _foreach_lerp_List(const TensorList& self, const TensorList& tensors1,
                              const TensorList& weights) {
  return lerp_list("_foreach_lerp", false, self, tensors1, weights);
}
void _foreach_lerp__List(const TensorList& self, const TensorList& tensors1,
                         const TensorList& weights) {
  lerp_list("_foreach_lerp_", true, self, tensors1, weights);
}

// Unary operators.
FLB_FOREACH_UNARY(sqrt, ForeachOp::kSqrt, slow_sqrt)
FLB_FOREACH_UNARY(neg, ForeachOp::kNeg, slow_neg)
FLB_FOREACH_UNARY(abs, ForeachOp::kAbs, slow_abs)
FLB_FOREACH_UNARY(exp, ForeachOp::kExp, slow_exp)
FLB_FOREACH_UNARY(sign, ForeachOp::kSign, slow_sign)
FLB_FOREACH_UNARY(reciprocal, ForeachOp::kReciprocal, slow_reciprocal)

// zero_, copy_, norm.
void _foreach_zero_(const TensorList& self) {
  check_nonempty("_foreach_zero_", self);
  for (const Tensor& t : self) zero_(t);
}

void _foreach_copy_(const TensorList& self, const TensorList& src, bool non_blocking) {
  check_nonempty("_foreach_copy_", self);
  check_lengths("_foreach_copy_", self.size(), src.size());
  for (size_t i = 0; i < self.size(); ++i) copy_(self[i], src[i], non_blocking);
}

TensorList _foreach_norm_Scalar(const TensorList& self, const Scalar& ord,
                                std::optional<ScalarType> dtype) {
  check_nonempty("_foreach_norm", self);
  return map(self, [&](size_t i) {
    return norm(self[i], ord, std::nullopt, false, dtype, OutArg::none());
  });
}

}  // namespace flambeau::ops
