// Registration of the plugin's first kernels (elementwise arithmetic, comparisons,
// reductions, indexing, sorting, scans, pooling, norms, losses, random, foreach, the
// nn group), then of each later group's own table (kernel_registry.h).
#include "backend/kernels/kernel_registry.h"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

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
// The nn group's operators (reduce_extra_ops.cu, triangle_ops.cu, creation_ops.cu).
const ReduceExtraOp kReduceExtra[] = {ReduceExtraOp::kAll,    ReduceExtraOp::kAny,
                                      ReduceExtraOp::kNanSum, ReduceExtraOp::kNanMean,
                                      ReduceExtraOp::kNorm,   ReduceExtraOp::kLogSumExp};
const TriangleOp kTriangle[] = {TriangleOp::kTril, TriangleOp::kTriu};
const SpaceOp kSpace[] = {SpaceOp::kLinspace, SpaceOp::kLogspace};

constexpr AllOps<UnaryOp, UnaryOp::kSign> kUnaryOps;  // kSign is the last

// A unary operator on the floating dtypes, or on every real dtype.
#define FLB_UNARY(NAME, OP) {NAME, unary, kUnaryOps[UnaryOp::OP], kFloat}
#define FLB_UNARY_INT(NAME, OP) {NAME, unary, kUnaryOps[UnaryOp::OP], kReal}

const Registration kEntries[] = {
    {"fill_", fill, nullptr, kReal},
    {"copy_", copy, nullptr, kReal},
    {"add", binary, &kBinary[0], kReal},
    {"sub", binary, &kBinary[1], kReal},
    {"mul", binary, &kBinary[2], kReal},
    {"div", binary, &kBinary[3], kReal},
    {"pow", binary, &kBinary[4], kReal},
    {"eq", compare, &kCompare[0], kBool},
    {"ne", compare, &kCompare[1], kBool},
    {"lt", compare, &kCompare[2], kBool},
    {"le", compare, &kCompare[3], kBool},
    {"gt", compare, &kCompare[4], kBool},
    {"ge", compare, &kCompare[5], kBool},
    {"logical_and", compare, &kCompare[6], kBool},
    {"logical_or", compare, &kCompare[7], kBool},
    {"logical_xor", compare, &kCompare[8], kBool},
    {"logical_not", compare, &kCompare[9], kBool},
    {"isnan", compare, &kCompare[10], kBool},
    {"isinf", compare, &kCompare[11], kBool},
    {"isfinite", compare, &kCompare[12], kBool},
    {"isposinf", compare, &kCompare[13], kBool},
    {"isneginf", compare, &kCompare[14], kBool},
    {"isclose", compare, &kCompare[15], kBool},
    {"where", where, nullptr, kReal},
    {"maximum", minmax, &kMinMax[0], kReal},
    {"max.other", minmax, &kMinMax[0], kReal},
    {"clamp_min", minmax, &kMinMax[0], kReal},
    {"minimum", minmax, &kMinMax[1], kReal},
    {"min.other", minmax, &kMinMax[1], kReal},
    {"clamp_max", minmax, &kMinMax[1], kReal},
    {"fmax", minmax, &kMinMax[2], kReal},
    {"fmin", minmax, &kMinMax[3], kReal},
    {"clamp", minmax, &kMinMax[4], kReal},
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
    {"sum", reduce, &kReduce[0], kReal},
    {"mean", reduce, &kReduce[1], kFloat},
    {"prod", reduce, &kReduce[2], kReal},
    {"amax", reduce, &kReduce[3], kReal},
    {"amin", reduce, &kReduce[4], kReal},
    {"argmax", arg_reduce, &kReduce[3], kAny},
    {"argmin", arg_reduce, &kReduce[4], kAny},
    {"bmm", bmm, nullptr, kReal},
    {"softmax", softmax, nullptr, kFloat},
    {"_softmax_backward_data", softmax_backward, nullptr, kFloat},
    {"uniform_", random_fill, &kRandom[0], kFloat},
    {"normal_", random_fill, &kRandom[1], kFloat},
    {"random_", random_fill, &kRandom[2], kReal},
    {"bernoulli_", random_fill, &kRandom[3], kReal},
    {"gather", gather, nullptr, kReal},
    {"index", gather, nullptr, kReal},
    {"scatter", scatter, nullptr, kReal},
    {"index_put", scatter, nullptr, kReal},
    {"_index_offsets", index_offsets, nullptr, kReal},
    {"masked_fill", masked_fill, nullptr, kReal},
    {"embedding", embedding, nullptr, kReal},
    {"cumsum", cumulative, &kScan[0], kReal},
    {"cumprod", cumulative, &kScan[1], kReal},
    {"logcumsumexp", logcumsumexp, nullptr, kFloat},
    {"cummax", cummax, nullptr, kReal},
    {"sort", sort, nullptr, kReal},
    {"topk", topk, nullptr, kReal},
    {"kthvalue", kthvalue, nullptr, kReal},
    {"mode", mode, nullptr, kReal},
    {"searchsorted", searchsorted, nullptr, kIndex},
    {"masked_scatter", masked_scatter, nullptr, kReal},
    // (the count by its input's dtype, nonzero by its output's, int64)
    {"_nonzero_count", nonzero_count, nullptr, kReal},
    {"nonzero", nonzero, nullptr, kInt64},
    {"masked_select", masked_select, nullptr, kReal},
    {"_foreach", foreach_op, nullptr, kFloat},
    {"lerp", fused_pointwise, &kFused[0], kFloat},
    {"addcmul", fused_pointwise, &kFused[1], kFloat},
    {"addcdiv", fused_pointwise, &kFused[2], kFloat},
    {"native_layer_norm", layer_norm, nullptr, kFloat},
    {"native_layer_norm_backward", layer_norm_backward, nullptr, kFloat},
    {"max_pool", max_pool, nullptr, kCompute},
    {"adaptive_max_pool", adaptive_max_pool, nullptr, kCompute},
    {"avg_pool", avg_pool, nullptr, kCompute},
    {"adaptive_avg_pool", adaptive_avg_pool, nullptr, kCompute},
    {"avg_pool_backward", avg_pool_backward, nullptr, kCompute},
    {"adaptive_avg_pool_backward", adaptive_avg_pool_backward, nullptr, kCompute},
    {"pool_index_scatter", pool_index_scatter, nullptr, kCompute},
    {"mse_loss", pointwise_loss, &kLoss[0], kFloat},
    {"smooth_l1_loss", pointwise_loss, &kLoss[1], kFloat},
    {"huber_loss", pointwise_loss, &kLoss[2], kFloat},
    {"binary_cross_entropy", pointwise_loss, &kLoss[3], kFloat},
    {"kl_div", pointwise_loss, &kLoss[4], kFloat},
    {"mse_loss_backward", pointwise_loss, &kLoss[5], kFloat},
    {"smooth_l1_loss_backward", pointwise_loss, &kLoss[6], kFloat},
    {"huber_loss_backward", pointwise_loss, &kLoss[7], kFloat},
    {"binary_cross_entropy_backward", pointwise_loss, &kLoss[8], kFloat},
    {"binary_cross_entropy_with_logits", pointwise_loss, &kLoss[9], kFloat},
    {"nll_loss_forward", nll_loss_forward, nullptr, kFloat},
    {"nll_loss_backward", nll_loss_backward, nullptr, kFloat},
    {"_ctc_loss", ctc_loss_forward, nullptr, kCompute},
    {"_ctc_loss_backward", ctc_loss_backward, nullptr, kCompute},
    {"embedding_bag", embedding_bag, nullptr, kFloat},
    {"embedding_dense_backward", embedding_dense_backward, nullptr, kFloat},
    // ---- nn group: reductions, triangles, ranges, convolution, resampling
    // (all / any / count_nonzero are found by their out's dtype, bool, uint8 or
    // int64: any dtype here) ----
    {"all", all_any, &kReduceExtra[0], kAny},
    {"any", all_any, &kReduceExtra[1], kAny},
    {"count_nonzero", count_nonzero, nullptr, kAny},
    {"nansum", reduce_extra, &kReduceExtra[2], kReal},
    {"nanmean", reduce_extra, &kReduceExtra[3], kFloat},
    {"norm", reduce_extra, &kReduceExtra[4], kFloat},
    {"logsumexp", reduce_extra, &kReduceExtra[5], kFloat},
    {"var", var, nullptr, kFloat},
    {"tril", triangle, &kTriangle[0], kReal},
    {"triu", triangle, &kTriangle[1], kReal},
    {"arange", arange, nullptr, kReal},
    {"linspace", space, &kSpace[0], kReal},
    {"logspace", space, &kSpace[1], kReal},
    {"conv_forward", conv_forward, nullptr, kCompute},
    {"conv_backward_input", conv_backward_input, nullptr, kCompute},
    {"conv_backward_weight", conv_backward_weight, nullptr, kCompute},
    {"conv_backward_bias", conv_backward_bias, nullptr, kCompute},
    {"resample", resample, nullptr, kCompute},
    {"resample_backward", resample_backward, nullptr, kCompute},
    {"_scaled_dot_product_attention_forward", attention_forward, nullptr, kCompute},
    {"_scaled_dot_product_attention_backward", attention_backward, nullptr, kCompute},
    {"_thnn_fused_lstm_cell", lstm_cell, nullptr, kCompute},
    {"_thnn_fused_lstm_cell_backward", lstm_cell_backward, nullptr, kCompute},
    {"_thnn_fused_gru_cell", gru_cell, nullptr, kCompute},
    {"_thnn_fused_gru_cell_backward", gru_cell_backward, nullptr, kCompute},
    {"_rnn_layer", rnn_layer, nullptr, kCompute},
    {"_rnn_layer_backward", rnn_layer_backward, nullptr, kCompute},
    // ---- end of the nn group ----
};

}  // namespace

// The first kernels' table, then each group's.
flb_status register_kernels(const flb_core_api* core, int32_t type) {
  if (flb_status s = register_table(core, type, kEntries); s != FLB_OK) return s;
  // ---- the counting, sampling and window group: its own table, in
  // counting_sampling_registry.cpp ----
  if (flb_status s = register_counting_sampling_windows(core, type); s != FLB_OK) return s;
  // ---- the linear algebra and FFT group (cuSOLVER, cuBLAS trsm, cuFFT): its own
  // table, in linalg_fft_registry.cpp ----
  if (flb_status s = register_linalg_fft(core, type); s != FLB_OK) return s;
  // ---- the elementwise math group (activations, bitwise, math, special
  // functions): its own table, in elementwise_math.cpp ----
  return register_elementwise_math(core, type);
}

}  // namespace flambeau::cuda::kernels
