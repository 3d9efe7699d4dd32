#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int32_t kRealDtypes[] = {FLB_BOOL,  FLB_UINT8,   FLB_INT8,     FLB_INT16,   FLB_INT32,
                                   FLB_INT64, FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
constexpr int32_t kFloatDtypes[] = {FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
constexpr int32_t kComputeDtypes[] = {FLB_FLOAT32, FLB_FLOAT64};
constexpr int32_t kIndexDtypes[] = {FLB_INT32, FLB_INT64};

// Which dtypes a kernel is registered for (the dtype of the call's first tensor):
// kCompute float32 and float64 (the pooling kernels' compute dtypes), kIndex int32
// and int64 (searchsorted's out).
enum class Dtypes { kReal, kFloat, kBoolOut, kAny, kCompute, kIndex };

// One registration: the kernel table's name, the function, its context (the
// operator, for functions that serve several) and its dtypes.
struct Entry {
  const char* name;
  flb_kernel_fn fn;
  const void* ctx;
  Dtypes dtypes;
};

const BinaryOp kBinary[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                            BinaryOp::kPow};
const CompareOp kCompare[] = {
    CompareOp::kEq,       CompareOp::kNe,       CompareOp::kLt,       CompareOp::kLe,
    CompareOp::kGt,       CompareOp::kGe,       CompareOp::kAnd,      CompareOp::kOr,
    CompareOp::kXor,      CompareOp::kNot,      CompareOp::kIsNan,    CompareOp::kIsInf,
    CompareOp::kIsFinite, CompareOp::kIsPosInf, CompareOp::kIsNegInf, CompareOp::kIsClose};
const MinMaxOp kMinMax[] = {MinMaxOp::kMax, MinMaxOp::kMin, MinMaxOp::kFmax, MinMaxOp::kFmin,
                            MinMaxOp::kClamp};
const RandomOp kRandom[] = {RandomOp::kUniform, RandomOp::kNormal, RandomOp::kRandom,
                            RandomOp::kBernoulli};
const ScanOp kScan[] = {ScanOp::kCumsum, ScanOp::kCumprod};
const LossOp kLoss[] = {LossOp::kMse,
                        LossOp::kSmoothL1,
                        LossOp::kHuber,
                        LossOp::kBinaryCrossEntropy,
                        LossOp::kKlDiv,
                        LossOp::kMseBackward,
                        LossOp::kSmoothL1Backward,
                        LossOp::kHuberBackward,
                        LossOp::kBinaryCrossEntropyBackward,
                        LossOp::kBinaryCrossEntropyWithLogits};
const ForeachOp kFused[] = {ForeachOp::kLerpTensor, ForeachOp::kAddcmul, ForeachOp::kAddcdiv};
const ReduceOp kReduce[] = {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kProd, ReduceOp::kAmax,
                            ReduceOp::kAmin};

// Every UnaryOp, indexed by its value (kSign is the last).
constexpr int kUnaryCount = static_cast<int>(UnaryOp::kSign) + 1;
struct UnaryOps {
  UnaryOp ops[kUnaryCount];
  constexpr UnaryOps() : ops() {
    for (int i = 0; i < kUnaryCount; ++i) ops[i] = static_cast<UnaryOp>(i);
  }
};
constexpr UnaryOps kUnaryOps;

// A unary operator on the floating dtypes, or on every real dtype.
#define FLB_UNARY(NAME, OP) \
  {NAME, unary, &kUnaryOps.ops[static_cast<int>(UnaryOp::OP)], Dtypes::kFloat}
#define FLB_UNARY_INT(NAME, OP) \
  {NAME, unary, &kUnaryOps.ops[static_cast<int>(UnaryOp::OP)], Dtypes::kReal}

const Entry kEntries[] = {
    {"fill_", fill, nullptr, Dtypes::kReal},
    {"copy_", copy, nullptr, Dtypes::kReal},
    {"add", binary, &kBinary[0], Dtypes::kReal},
    {"sub", binary, &kBinary[1], Dtypes::kReal},
    {"mul", binary, &kBinary[2], Dtypes::kReal},
    {"div", binary, &kBinary[3], Dtypes::kReal},
    {"pow", binary, &kBinary[4], Dtypes::kReal},
    {"eq", compare, &kCompare[0], Dtypes::kBoolOut},
    {"ne", compare, &kCompare[1], Dtypes::kBoolOut},
    {"lt", compare, &kCompare[2], Dtypes::kBoolOut},
    {"le", compare, &kCompare[3], Dtypes::kBoolOut},
    {"gt", compare, &kCompare[4], Dtypes::kBoolOut},
    {"ge", compare, &kCompare[5], Dtypes::kBoolOut},
    {"logical_and", compare, &kCompare[6], Dtypes::kBoolOut},
    {"logical_or", compare, &kCompare[7], Dtypes::kBoolOut},
    {"logical_xor", compare, &kCompare[8], Dtypes::kBoolOut},
    {"logical_not", compare, &kCompare[9], Dtypes::kBoolOut},
    {"isnan", compare, &kCompare[10], Dtypes::kBoolOut},
    {"isinf", compare, &kCompare[11], Dtypes::kBoolOut},
    {"isfinite", compare, &kCompare[12], Dtypes::kBoolOut},
    {"isposinf", compare, &kCompare[13], Dtypes::kBoolOut},
    {"isneginf", compare, &kCompare[14], Dtypes::kBoolOut},
    {"isclose", compare, &kCompare[15], Dtypes::kBoolOut},
    {"where", where, nullptr, Dtypes::kReal},
    {"maximum", minmax, &kMinMax[0], Dtypes::kReal},
    {"max.other", minmax, &kMinMax[0], Dtypes::kReal},
    {"clamp_min", minmax, &kMinMax[0], Dtypes::kReal},
    {"minimum", minmax, &kMinMax[1], Dtypes::kReal},
    {"min.other", minmax, &kMinMax[1], Dtypes::kReal},
    {"clamp_max", minmax, &kMinMax[1], Dtypes::kReal},
    {"fmax", minmax, &kMinMax[2], Dtypes::kReal},
    {"fmin", minmax, &kMinMax[3], Dtypes::kReal},
    {"clamp", minmax, &kMinMax[4], Dtypes::kReal},
    FLB_UNARY_INT("neg", kNeg),
    FLB_UNARY_INT("abs", kAbs),
    FLB_UNARY_INT("relu", kRelu),
    FLB_UNARY_INT("sign", kSign),
    FLB_UNARY_INT("floor", kFloor),
    FLB_UNARY_INT("ceil", kCeil),
    FLB_UNARY_INT("trunc", kTrunc),
    FLB_UNARY_INT("round", kRound),
    FLB_UNARY("exp", kExp),
    FLB_UNARY("exp2", kExp2),
    FLB_UNARY("expm1", kExpm1),
    FLB_UNARY("log", kLog),
    FLB_UNARY("log1p", kLog1p),
    FLB_UNARY("log2", kLog2),
    FLB_UNARY("log10", kLog10),
    FLB_UNARY("sqrt", kSqrt),
    FLB_UNARY("rsqrt", kRsqrt),
    FLB_UNARY("sin", kSin),
    FLB_UNARY("cos", kCos),
    FLB_UNARY("tan", kTan),
    FLB_UNARY("asin", kAsin),
    FLB_UNARY("acos", kAcos),
    FLB_UNARY("atan", kAtan),
    FLB_UNARY("sinh", kSinh),
    FLB_UNARY("cosh", kCosh),
    FLB_UNARY("tanh", kTanh),
    FLB_UNARY("asinh", kAsinh),
    FLB_UNARY("acosh", kAcosh),
    FLB_UNARY("atanh", kAtanh),
    FLB_UNARY("sigmoid", kSigmoid),
    FLB_UNARY("erf", kErf),
    FLB_UNARY("erfc", kErfc),
    FLB_UNARY("reciprocal", kReciprocal),
    FLB_UNARY("frac", kFrac),
    {"sum", reduce, &kReduce[0], Dtypes::kReal},
    {"mean", reduce, &kReduce[1], Dtypes::kFloat},
    {"prod", reduce, &kReduce[2], Dtypes::kReal},
    {"amax", reduce, &kReduce[3], Dtypes::kReal},
    {"amin", reduce, &kReduce[4], Dtypes::kReal},
    {"argmax", arg_reduce, &kReduce[3], Dtypes::kAny},
    {"argmin", arg_reduce, &kReduce[4], Dtypes::kAny},
    {"bmm", bmm, nullptr, Dtypes::kReal},
    {"softmax", softmax, nullptr, Dtypes::kFloat},
    {"_softmax_backward_data", softmax_backward, nullptr, Dtypes::kFloat},
    {"uniform_", random_fill, &kRandom[0], Dtypes::kFloat},
    {"normal_", random_fill, &kRandom[1], Dtypes::kFloat},
    {"random_", random_fill, &kRandom[2], Dtypes::kReal},
    {"bernoulli_", random_fill, &kRandom[3], Dtypes::kReal},
    {"gather", gather, nullptr, Dtypes::kReal},
    {"index", gather, nullptr, Dtypes::kReal},
    {"scatter", scatter, nullptr, Dtypes::kReal},
    {"index_put", scatter, nullptr, Dtypes::kReal},
    {"_index_offsets", index_offsets, nullptr, Dtypes::kReal},
    {"masked_fill", masked_fill, nullptr, Dtypes::kReal},
    {"embedding", embedding, nullptr, Dtypes::kReal},
    {"cumsum", cumulative, &kScan[0], Dtypes::kReal},
    {"cumprod", cumulative, &kScan[1], Dtypes::kReal},
    {"logcumsumexp", logcumsumexp, nullptr, Dtypes::kFloat},
    {"cummax", cummax, nullptr, Dtypes::kReal},
    {"sort", sort, nullptr, Dtypes::kReal},
    {"topk", topk, nullptr, Dtypes::kReal},
    {"kthvalue", kthvalue, nullptr, Dtypes::kReal},
    {"mode", mode, nullptr, Dtypes::kReal},
    {"searchsorted", searchsorted, nullptr, Dtypes::kIndex},
    {"masked_scatter", masked_scatter, nullptr, Dtypes::kReal},
    {"_foreach", foreach_op, nullptr, Dtypes::kFloat},
    {"lerp", fused_pointwise, &kFused[0], Dtypes::kFloat},
    {"addcmul", fused_pointwise, &kFused[1], Dtypes::kFloat},
    {"addcdiv", fused_pointwise, &kFused[2], Dtypes::kFloat},
    {"native_layer_norm", layer_norm, nullptr, Dtypes::kFloat},
    {"native_layer_norm_backward", layer_norm_backward, nullptr, Dtypes::kFloat},
    {"max_pool", max_pool, nullptr, Dtypes::kCompute},
    {"adaptive_max_pool", adaptive_max_pool, nullptr, Dtypes::kCompute},
    {"avg_pool", avg_pool, nullptr, Dtypes::kCompute},
    {"adaptive_avg_pool", adaptive_avg_pool, nullptr, Dtypes::kCompute},
    {"avg_pool_backward", avg_pool_backward, nullptr, Dtypes::kCompute},
    {"adaptive_avg_pool_backward", adaptive_avg_pool_backward, nullptr, Dtypes::kCompute},
    {"pool_index_scatter", pool_index_scatter, nullptr, Dtypes::kCompute},
    {"mse_loss", pointwise_loss, &kLoss[0], Dtypes::kFloat},
    {"smooth_l1_loss", pointwise_loss, &kLoss[1], Dtypes::kFloat},
    {"huber_loss", pointwise_loss, &kLoss[2], Dtypes::kFloat},
    {"binary_cross_entropy", pointwise_loss, &kLoss[3], Dtypes::kFloat},
    {"kl_div", pointwise_loss, &kLoss[4], Dtypes::kFloat},
    {"mse_loss_backward", pointwise_loss, &kLoss[5], Dtypes::kFloat},
    {"smooth_l1_loss_backward", pointwise_loss, &kLoss[6], Dtypes::kFloat},
    {"huber_loss_backward", pointwise_loss, &kLoss[7], Dtypes::kFloat},
    {"binary_cross_entropy_backward", pointwise_loss, &kLoss[8], Dtypes::kFloat},
    {"binary_cross_entropy_with_logits", pointwise_loss, &kLoss[9], Dtypes::kFloat},
    {"nll_loss_forward", nll_loss_forward, nullptr, Dtypes::kFloat},
    {"nll_loss_backward", nll_loss_backward, nullptr, Dtypes::kFloat},
    {"embedding_bag", embedding_bag, nullptr, Dtypes::kFloat},
    {"embedding_dense_backward", embedding_dense_backward, nullptr, Dtypes::kFloat},
};

}  // namespace

flb_status register_kernels(const flb_core_api* core, int32_t type) {
  auto reg = [&](const Entry& e, int32_t dtype) {
    return core->register_kernel(type, e.name, dtype, e.fn, const_cast<void*>(e.ctx));
  };
  for (const Entry& e : kEntries) {
    flb_status s = FLB_OK;
    switch (e.dtypes) {
      case Dtypes::kReal:
        for (int32_t d : kRealDtypes)
          if (s == FLB_OK) s = reg(e, d);
        break;
      case Dtypes::kFloat:
        for (int32_t d : kFloatDtypes)
          if (s == FLB_OK) s = reg(e, d);
        break;
      case Dtypes::kBoolOut:
        s = reg(e, FLB_BOOL);
        break;
      case Dtypes::kAny:
        s = reg(e, FLB_ANY_DTYPE);
        break;
      case Dtypes::kCompute:
        for (int32_t d : kComputeDtypes)
          if (s == FLB_OK) s = reg(e, d);
        break;
      case Dtypes::kIndex:
        for (int32_t d : kIndexDtypes)
          if (s == FLB_OK) s = reg(e, d);
        break;
    }
    if (s != FLB_OK) return s;
  }
  return FLB_OK;
}

}  // namespace flambeau::cuda::kernels
