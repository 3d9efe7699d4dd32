// Registration of the counting, sampling and window group: bincount and histc
// (histogram_ops.cu), value_selecting_reduction_backward (select_backward_ops.cu),
// the samplers beyond uniform/normal/random/bernoulli (random_extra_ops.cu) and
// the window functions (window_ops.cu), each under the kernel table's name for the
// dtypes its CPU kernel takes (the dtype of the call's first tensor).
// register_kernels() calls register_counting_sampling_windows().
//
// nonzero and masked_select are in register_kernels.cpp (mask_select_ops.cu);
// _unique2 returns three data-sized tensors, has no C form in the kernel table and
// runs on the CPU for plugin devices (docs/design/backends.rst).
#include <cstdint>

#include "backend/kernels/kernel_registry.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/random_extra_sampling.h"
#include "backend/kernels/window_math.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int32_t kGeometricCodes[] = {FLB_UINT8,    FLB_INT8,    FLB_INT16,
                                       FLB_INT32,    FLB_INT64,   FLB_FLOAT16,
                                       FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
constexpr int32_t kBincountCodes[] = {FLB_INT64, FLB_FLOAT32, FLB_FLOAT64};

const DistributionOp kDistribution[] = {DistributionOp::kExponential, DistributionOp::kGeometric,
                                        DistributionOp::kCauchy, DistributionOp::kLogNormal};
const WindowOp kWindow[] = {WindowOp::kBartlett, WindowOp::kBlackman, WindowOp::kHamming,
                            WindowOp::kHann, WindowOp::kKaiser};

const Registration kEntries[] = {
    {"bincount", bincount, nullptr, dtype_set(kBincountCodes)},
    {"histc", histc, nullptr, kFloat},
    {"value_selecting_reduction_backward", value_selecting_backward, nullptr, kFloat},
    {"exponential_", distribution_fill, &kDistribution[0], kFloat},
    {"geometric_", distribution_fill, &kDistribution[1], dtype_set(kGeometricCodes)},
    {"cauchy_", distribution_fill, &kDistribution[2], kFloat},
    {"log_normal_", distribution_fill, &kDistribution[3], kFloat},
    {"poisson", poisson, nullptr, kFloat},
    {"multinomial", multinomial, nullptr, kInt64},
    {"randperm", randperm, nullptr, kInt64},
    {"bartlett_window", window, &kWindow[0], kFloat},
    {"blackman_window", window, &kWindow[1], kFloat},
    {"hamming_window", window, &kWindow[2], kFloat},
    {"hann_window", window, &kWindow[3], kFloat},
    {"kaiser_window", window, &kWindow[4], kFloat},
};

}  // namespace

flb_status register_counting_sampling_windows(const flb_core_api* core, int32_t type) {
  return register_table(core, type, kEntries);
}

}  // namespace flambeau::cuda::kernels
