// The CUDA kernels registered through the C ABI, and their registration.
#pragma once
#include <flambeau/backend_abi.h>

namespace flambeau::cuda::kernels {

// fill_ and copy_ (fill_copy.cu).
flb_status fill(void* ctx, const flb_kernel_call* call);
flb_status copy(void* ctx, const flb_kernel_call* call);
// add, sub, mul, div, pow (binary_ops.cu); ctx is the BinaryOp.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow };
flb_status binary(void* ctx, const flb_kernel_call* call);
// Comparisons, logical operators and value tests, out bool (compare_ops.cu); ctx
// is the CompareOp. kIsClose: scalars [rtol, atol, equal_nan].
enum class CompareOp {
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kXor,
  kNot,
  kIsNan,
  kIsInf,
  kIsFinite,
  kIsPosInf,
  kIsNegInf,
  kIsClose
};
flb_status compare(void* ctx, const flb_kernel_call* call);
// where: tensors [out, cond (bool), a, b] (compare_ops.cu).
flb_status where(void* ctx, const flb_kernel_call* call);
// The min/max family (minmax_ops.cu); ctx is the MinMaxOp. kMax serves maximum,
// max.other and clamp_min; kMin minimum, min.other and clamp_max.
enum class MinMaxOp { kMax, kMin, kFmax, kFmin, kClamp };
flb_status minmax(void* ctx, const flb_kernel_call* call);
// Unary operators (unary_ops.cu); ctx is the UnaryOp.
enum class UnaryOp {
  kNeg,
  kAbs,
  kRelu,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kReciprocal,
  kExp2,
  kExpm1,
  kLog1p,
  kLog2,
  kLog10,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  kErfc,
  kFrac,
  kFloor,
  kCeil,
  kTrunc,
  kRound,  // scalars [decimals]
  kSign
};
flb_status unary(void* ctx, const flb_kernel_call* call);
// Whether a unary operator is defined on integer (and bool) dtypes too.
bool unary_takes_integers(UnaryOp op);
// Reductions over dims (reduce_ops.cu); ctx is the ReduceOp. reduce: tensors
// [out, in], ints [dims...]; arg_reduce (kAmax: argmax, kAmin: argmin): tensors
// [values or absent, indices, in], ints [dim].
enum class ReduceOp { kSum, kMean, kProd, kAmax, kAmin };
flb_status reduce(void* ctx, const flb_kernel_call* call);
flb_status arg_reduce(void* ctx, const flb_kernel_call* call);
// bmm: tensors [out (B, M, N), a (B, M, K), b (B, K, N)] (bmm.cu).
flb_status bmm(void* ctx, const flb_kernel_call* call);
// softmax: tensors [out, in] contiguous, ints [outer, n, inner, log]; its backward
// _softmax_backward_data: tensors [grad_input, grad_output, output] (softmax.cu).
flb_status softmax(void* ctx, const flb_kernel_call* call);
flb_status softmax_backward(void* ctx, const flb_kernel_call* call);
// Random samplers on the core's Philox generator (random_ops.cu); ctx is the
// RandomOp: uniform_, normal_, random_, bernoulli_.
enum class RandomOp { kUniform, kNormal, kRandom, kBernoulli };
flb_status random_fill(void* ctx, const flb_kernel_call* call);
// Indexing (indexing_ops.cu): gather and index: tensors [out, src, index];
// scatter and index_put: tensors [dst, values, index], ints [mode (PutMode)];
// _index_offsets: tensors [acc, index]; each with structs [flb_index_spec]. An
// index out of range fails with the CPU's message (FLB_ERROR: RuntimeError).
// masked_fill: tensors [dst, mask], scalars [value]; embedding: tensors [out,
// weight, indices].
flb_status gather(void* ctx, const flb_kernel_call* call);
flb_status scatter(void* ctx, const flb_kernel_call* call);
flb_status index_offsets(void* ctx, const flb_kernel_call* call);
flb_status masked_fill(void* ctx, const flb_kernel_call* call);
flb_status embedding(void* ctx, const flb_kernel_call* call);
// Scans (scan_ops.cu): cumsum and cumprod (ctx is the ScanOp): tensors [out, in],
// ints [dim]; logcumsumexp: tensors [out, in] as [rows, n]; cummax: tensors
// [values, indices, in] as [rows, n], ints [is_max].
enum class ScanOp { kCumsum, kCumprod };
flb_status cumulative(void* ctx, const flb_kernel_call* call);
flb_status logcumsumexp(void* ctx, const flb_kernel_call* call);
flb_status cummax(void* ctx, const flb_kernel_call* call);
// Sorting rows of a contiguous [rows, n] input (sort_ops.cu): sort: tensors
// [values, indices, in], ints [descending]; topk: ints [k, largest, sorted].
flb_status sort(void* ctx, const flb_kernel_call* call);
flb_status topk(void* ctx, const flb_kernel_call* call);

// kthvalue (so kthvalue, median, nanmedian along a dim): tensors [values, indices,
// in [rows, n]], ints [k, what (Select: kth, median, nanmedian)]; mode: tensors
// [values, indices, in] (sort_ops.cu, from the rows sorted as sort sorts them).
flb_status kthvalue(void* ctx, const flb_kernel_call* call);
flb_status mode(void* ctx, const flb_kernel_call* call);
// searchsorted: tensors [out, seq, values, sorter?], ints [right] (search_ops.cu).
flb_status searchsorted(void* ctx, const flb_kernel_call* call);
// masked_scatter: tensors [dst, mask, source] (masked_scatter.cu).
flb_status masked_scatter(void* ctx, const flb_kernel_call* call);
// _nonzero_count: tensors [in], the count in *int_result; nonzero: tensors [out, in];
// masked_select: tensors [out, in, mask] (mask_select_ops.cu).
flb_status nonzero_count(void* ctx, const flb_kernel_call* call);
flb_status nonzero(void* ctx, const flb_kernel_call* call);
flb_status masked_select(void* ctx, const flb_kernel_call* call);
// The fused step of the _foreach_* operators (foreach_ops.cu): tensors [out, a, b?,
// c?], scalars [s0, s1], ints [op]: the core's ForeachOp, numbered by the plugin ABI's
// FLB_FOREACH_OP_* (flambeau/backend_kernels.h, generated from the kernel table).
enum class ForeachOp : int64_t {
  kAddScalar = FLB_FOREACH_OP_ADD_SCALAR,
  kAddTensor = FLB_FOREACH_OP_ADD_TENSOR,
  kMulScalar = FLB_FOREACH_OP_MUL_SCALAR,
  kMulTensor = FLB_FOREACH_OP_MUL_TENSOR,
  kDivScalar = FLB_FOREACH_OP_DIV_SCALAR,
  kDivTensor = FLB_FOREACH_OP_DIV_TENSOR,
  kMaxScalar = FLB_FOREACH_OP_MAX_SCALAR,
  kMaxTensor = FLB_FOREACH_OP_MAX_TENSOR,
  kMinScalar = FLB_FOREACH_OP_MIN_SCALAR,
  kMinTensor = FLB_FOREACH_OP_MIN_TENSOR,
  kPowScalar = FLB_FOREACH_OP_POW_SCALAR,
  kPowTensor = FLB_FOREACH_OP_POW_TENSOR,
  kRPowScalar = FLB_FOREACH_OP_R_POW_SCALAR,
  kLerpScalar = FLB_FOREACH_OP_LERP_SCALAR,
  kLerpTensor = FLB_FOREACH_OP_LERP_TENSOR,
  kAddcmul = FLB_FOREACH_OP_ADDCMUL,
  kAddcdiv = FLB_FOREACH_OP_ADDCDIV,
  kSqrt = FLB_FOREACH_OP_SQRT,
  kNeg = FLB_FOREACH_OP_NEG,
  kAbs = FLB_FOREACH_OP_ABS,
  kExp = FLB_FOREACH_OP_EXP,
  kSign = FLB_FOREACH_OP_SIGN,
  kReciprocal = FLB_FOREACH_OP_RECIPROCAL,
};
flb_status foreach_op(void* ctx, const flb_kernel_call* call);
// The elementwise lerp, addcmul and addcdiv (ctx is the ForeachOp kLerpTensor,
// kAddcmul or kAddcdiv): tensors [out, self, t1, t2], scalars [value].
flb_status fused_pointwise(void* ctx, const flb_kernel_call* call);
// native_layer_norm and its backward (norm_ops.cu); group norm reuses them.
flb_status layer_norm(void* ctx, const flb_kernel_call* call);
flb_status layer_norm_backward(void* ctx, const flb_kernel_call* call);
// Pooling over contiguous (planes, D, H, W) float32/float64 tensors with
// structs [flb_pool_geometry] (pool_ops.cu): max_pool and adaptive_max_pool
// (tensors [out, indices, input]), avg_pool and adaptive_avg_pool (tensors [out,
// input]), their backwards (tensors [grad_input, grad_output]), and
// pool_index_scatter (tensors [dst, src, indices], ints [accumulate], the
// position of a bad index or -1 in *int_result).
flb_status max_pool(void* ctx, const flb_kernel_call* call);
flb_status adaptive_max_pool(void* ctx, const flb_kernel_call* call);
flb_status avg_pool(void* ctx, const flb_kernel_call* call);
flb_status adaptive_avg_pool(void* ctx, const flb_kernel_call* call);
flb_status avg_pool_backward(void* ctx, const flb_kernel_call* call);
flb_status adaptive_avg_pool_backward(void* ctx, const flb_kernel_call* call);
flb_status pool_index_scatter(void* ctx, const flb_kernel_call* call);
// Losses (loss_ops.cu): the pointwise ones through the elementwise loop (ctx is the
// LossOp; tensors [out, inputs...], scalars [args...]), nll_loss_forward (tensors
// [out, total_weight, input, target, weight?]) and nll_loss_backward (tensors
// [grad_input, grad_output, target, weight?]), ints [N, C, D, reduction, ignore_index].
enum class LossOp {
  kMse,
  kSmoothL1,
  kHuber,
  kBinaryCrossEntropy,
  kKlDiv,
  kMseBackward,
  kSmoothL1Backward,
  kHuberBackward,
  kBinaryCrossEntropyBackward,
  kBinaryCrossEntropyWithLogits
};
flb_status pointwise_loss(void* ctx, const flb_kernel_call* call);
flb_status nll_loss_forward(void* ctx, const flb_kernel_call* call);
flb_status nll_loss_backward(void* ctx, const flb_kernel_call* call);
// The CTC loss (ctc_ops.cu, recursions in ctc_math.h): _ctc_loss (tensors [nll,
// log_alpha, log_probs, targets, offsets, input_lengths, target_lengths]; ints [blank])
// and _ctc_loss_backward (tensors [grad, grad_out, log_probs, targets, offsets,
// input_lengths, target_lengths, nll, log_alpha]; ints [blank, zero_infinity]).
flb_status ctc_loss_forward(void* ctx, const flb_kernel_call* call);
flb_status ctc_loss_backward(void* ctx, const flb_kernel_call* call);
// embedding_bag and embedding_dense_backward (embedding_ops.cu).
flb_status embedding_bag(void* ctx, const flb_kernel_call* call);
flb_status embedding_dense_backward(void* ctx, const flb_kernel_call* call);

// ---- The elementwise math group (activations, bitwise, binary and unary math,
// special functions), registered by register_elementwise_math (elementwise_math.cpp).
// Activations and logit (activation_ops.cu): tensors [out, self] or, for a
// backward, [grad_input, grad_output, self]; scalars: the options in schema order.
enum class ActivationOp {
  kElu,
  kEluBackward,
  kGelu,
  kGeluBackward,
  kHardshrink,
  kHardshrinkBackward,
  kHardsigmoid,
  kHardsigmoidBackward,
  kHardswish,
  kHardswishBackward,
  kHardtanh,
  kHardtanhBackward,
  kLeakyRelu,
  kLeakyReluBackward,
  kLogSigmoid,
  kLogSigmoidBackward,
  kMish,
  kMishBackward,
  kSilu,
  kSiluBackward,
  kSoftplus,
  kSoftplusBackward,
  kSoftshrink,
  kSoftshrinkBackward,
  kThreshold,
  kThresholdBackward,
  kLogit
};
flb_status activation(void* ctx, const flb_kernel_call* call);
// Bitwise operators (bitwise_ops.cu): tensors [out, a, b] ([out, a] for kNot).
enum class BitwiseOp { kAnd, kOr, kXor, kNot, kLeftShift, kRightShift };
flb_status bitwise(void* ctx, const flb_kernel_call* call);
// Binary and unary math computed in the compute type (math_ops.cu): tensors [out,
// inputs...]; nan_to_num: scalars [nan, posinf, neginf] (a bool: not given);
// signbit and isreal: out bool. frexp: tensors [mantissa, exponent (int32), input].
enum class MathOp {
  kAtan2,
  kCopysign,
  kHypot,
  kLogaddexp,
  kLogaddexp2,
  kXlogy,
  kXlog1py,
  kLdexp,
  kNextafter,
  kFmod,
  kRemainder,
  kGcd,
  kLcm,
  kHeaviside,
  kAngle,
  kConjPhysical,
  kSgn,
  kDeg2rad,
  kRad2deg,
  kSinc,
  kNanToNum,
  kSignbit,
  kIsreal
};
flb_status math(void* ctx, const flb_kernel_call* call);
flb_status frexp_kernel(void* ctx, const flb_kernel_call* call);
// Special functions computed in double and rounded once, as the CPU's
// (special_ops.cu, special_functions.h, bessel_functions.h): tensors [out, x] or
// [out, a, b] (the binary ones from kIgamma on); mvlgamma: scalars [p]; polygamma:
// scalars [n].
enum class SpecialOp {
  kLgamma,
  kDigamma,
  kErfinv,
  kMvlgamma,
  kPolygamma,
  kEntr,
  kErfcx,
  kNdtr,
  kNdtri,
  kLogNdtr,
  kSphericalBesselJ0,
  kI0,
  kI0e,
  kI1,
  kI1e,
  kBesselJ0,
  kBesselJ1,
  kBesselY0,
  kBesselY1,
  kModifiedBesselK0,
  kModifiedBesselK1,
  kScaledModifiedBesselK0,
  kScaledModifiedBesselK1,
  kAiryAi,
  kIgamma,
  kIgammac,
  kZeta,
  kChebyshevT,
  kChebyshevU,
  kChebyshevV,
  kChebyshevW,
  kShiftedChebyshevT,
  kShiftedChebyshevU,
  kShiftedChebyshevV,
  kShiftedChebyshevW,
  kHermiteH,
  kHermiteHe,
  kLaguerreL,
  kLegendreP
};
flb_status special_function(void* ctx, const flb_kernel_call* call);
flb_status register_elementwise_math(const flb_core_api* core, int32_t type);

// ---- nn group: reductions, triangles, ranges, convolution, resampling ----
// all / any (ctx: ReduceExtraOp kAll or kAny): tensors [out (bool or uint8),
// in], ints [dims...]; count_nonzero: tensors [out (int64), in]; nansum,
// nanmean, norm (scalars [p]) and logsumexp (ctx the ReduceExtraOp): tensors
// [out, in] of one dtype; var: tensors [var_out, mean_out?, in], scalars
// [correction], ints [dims..., take_sqrt] (reduce_extra_ops.cu).
enum class ReduceExtraOp { kAll, kAny, kNanSum, kNanMean, kNorm, kLogSumExp };
flb_status all_any(void* ctx, const flb_kernel_call* call);
flb_status count_nonzero(void* ctx, const flb_kernel_call* call);
flb_status reduce_extra(void* ctx, const flb_kernel_call* call);
flb_status var(void* ctx, const flb_kernel_call* call);
// tril / triu (ctx the TriangleOp): tensors [self], ints [diagonal] (triangle_ops.cu).
enum class TriangleOp { kTril, kTriu };
flb_status triangle(void* ctx, const flb_kernel_call* call);
// arange: tensors [out], scalars [start, step]; linspace / logspace (ctx the
// SpaceOp): tensors [out], scalars [start, end, base?] (creation_ops.cu).
enum class SpaceOp { kLinspace, kLogspace };
flb_status arange(void* ctx, const flb_kernel_call* call);
flb_status space(void* ctx, const flb_kernel_call* call);
// Convolution over contiguous float32/float64 tensors with structs
// [flb_conv_geometry] (conv_ops.cu): conv_forward (tensors [out, input, weight,
// bias?]), conv_backward_input (tensors [grad_input, grad_output, weight,
// bias?]), conv_backward_weight (tensors [grad_weight, grad_output, input]) and
// conv_backward_bias (tensors [grad_bias, grad_output]).
flb_status conv_forward(void* ctx, const flb_kernel_call* call);
flb_status conv_backward_input(void* ctx, const flb_kernel_call* call);
flb_status conv_backward_weight(void* ctx, const flb_kernel_call* call);
flb_status conv_backward_bias(void* ctx, const flb_kernel_call* call);
// resample (tensors [out, input]) and resample_backward (tensors [grad_input,
// grad_output]) over contiguous float32/float64 (planes, D, H, W) with structs
// [flb_resample_geometry] (resample_ops.cu).
flb_status resample(void* ctx, const flb_kernel_call* call);
flb_status resample_backward(void* ctx, const flb_kernel_call* call);
// Scaled dot-product attention over structs [flb_attention_problem], float32
// and float64 (attention_ops.cu): _scaled_dot_product_attention_forward
// (tensors [q, k, v, mask?, out, logsumexp]) and its backward (tensors [q, k, v,
// mask?, grad_out, out, logsumexp, grad_q, grad_k, grad_v]).
flb_status attention_forward(void* ctx, const flb_kernel_call* call);
flb_status attention_backward(void* ctx, const flb_kernel_call* call);
// The fused LSTM and GRU cells and their backwards, float32 and float64, with the
// CPU's workspace layout (rnn_cell_ops.cu).
flb_status lstm_cell(void* ctx, const flb_kernel_call* call);
flb_status lstm_cell_backward(void* ctx, const flb_kernel_call* call);
flb_status gru_cell(void* ctx, const flb_kernel_call* call);
flb_status gru_cell_backward(void* ctx, const flb_kernel_call* call);
// _rnn_layer and _rnn_layer_backward: one layer over a packed sequence with
// structs [flb_rnn_layer_shape, flb_rnn_layer_weights(, flb_rnn_layer_grads)]
// and the CPU's workspace layout (rnn_layer_ops.cu).
flb_status rnn_layer(void* ctx, const flb_kernel_call* call);
flb_status rnn_layer_backward(void* ctx, const flb_kernel_call* call);
// ---- end of the nn group ----

// ---- counting, sampling and window group, registered by
// register_counting_sampling_windows (counting_sampling_registry.cpp) ----
// bincount: tensors [out, in (int64), weights?]; histc: tensors [out, in
// (float64)], scalars [lo, hi] (histogram_ops.cu).
flb_status bincount(void* ctx, const flb_kernel_call* call);
flb_status histc(void* ctx, const flb_kernel_call* call);
// value_selecting_reduction_backward: tensors [out (rows, n), grad (rows, k),
// indices (rows, k)] (select_backward_ops.cu).
flb_status value_selecting_backward(void* ctx, const flb_kernel_call* call);
// exponential_, geometric_, cauchy_, log_normal_ (ctx the DistributionOp of
// random_extra_sampling.h): tensors [out], scalars [a, b]; poisson: tensors [out,
// rates]; multinomial: tensors [samples, probs], ints [replacement]; randperm:
// tensors [out] (random_extra_ops.cu).
flb_status distribution_fill(void* ctx, const flb_kernel_call* call);
flb_status poisson(void* ctx, const flb_kernel_call* call);
flb_status multinomial(void* ctx, const flb_kernel_call* call);
flb_status randperm(void* ctx, const flb_kernel_call* call);
// The window functions (ctx the WindowOp of window_math.h): tensors [out],
// scalars [alpha, beta], ints [periodic] (window_ops.cu).
flb_status window(void* ctx, const flb_kernel_call* call);
flb_status register_counting_sampling_windows(const flb_core_api* core, int32_t type);
// ---- end of the counting, sampling and window group ----

// ---- linear algebra and FFT group (cuSOLVER, cuBLAS trsm, cuFFT): the kernels in
// linalg_fft_kernels.h, registered by register_linalg_fft (linalg_fft_registry.cpp) ----
flb_status register_linalg_fft(const flb_core_api* core, int32_t type);
// ---- end of the linear algebra and FFT group ----

// Registers every kernel above for device type `type`: FLB_OK or the core's error.
flb_status register_kernels(const flb_core_api* core, int32_t type);

}  // namespace flambeau::cuda::kernels
