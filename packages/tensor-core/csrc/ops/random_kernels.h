// Kernel signatures of the random samplers, shared by the frontends
// (ops/random.cpp) and every backend. `out` is always contiguous; a kernel
// reserves its Philox counters from `gen` itself, and element i of `out`
// (row-major) takes its bits from fixed lanes of the reserved counters, so
// results never depend on how the work is split across threads.
#pragma once
#include <cstdint>

#include "core/generator.h"
#include "core/tensor.h"

namespace flambeau {

// Uniform on [from, to) for floating types.
// UniformKernel: declared in kernels/table.yaml.
// Normal(mean, std) for floating types (Box-Muller on lane pairs).
// NormalKernel: declared in kernels/table.yaml.
// Integers uniform on [from, from + range) for real and bool types; range > 0.
// RandomKernel: declared in kernels/table.yaml.
// 1 with probability p (float64, contiguous, one element or out's numel), else 0.
// BernoulliKernel: declared in kernels/table.yaml.
// Samplers that transform one uniform per element, registered as exponential_
// (rate a), geometric_ (p a, on {1, 2, ...}), cauchy_ (median a, sigma b) and
// log_normal_ (mean a, std b of the underlying normal). Element i uses lane i
// (float64: lanes 2i, 2i+1); log_normal_ uses the normal sampler's lanes.
enum class Distribution { kExponential, kGeometric, kCauchy, kLogNormal };
// DistributionKernel: declared in kernels/table.yaml.
// Poisson samples with the rates in `rates` (float64, contiguous, out's numel).
// Element i draws from its own counter (first + i), word counter_hi = 0, 1, ...
// PoissonKernel: declared in kernels/table.yaml.
// `samples` (int64, rows x n) drawn from each row of `probs` (float64, rows x
// categories, validated). Row r uses lanes r * n + s with replacement, lanes
// r * categories + c (one exponential key per category) without.
// MultinomialKernel: declared in kernels/table.yaml.
// A permutation of 0..n-1 into an int64 `out` of n elements.
// RandpermKernel: declared in kernels/table.yaml.

}  // namespace flambeau
