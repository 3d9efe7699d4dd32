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
using UniformKernel = void(const Tensor& out, Generator& gen, double from, double to);
// Normal(mean, std) for floating types (Box-Muller on lane pairs).
using NormalKernel = void(const Tensor& out, Generator& gen, double mean, double std);
// Integers uniform on [from, from + range) for real and bool types; range > 0.
using RandomKernel = void(const Tensor& out, Generator& gen, int64_t from, uint64_t range);
// 1 with probability p (float64, contiguous, one element or out's numel), else 0.
using BernoulliKernel = void(const Tensor& out, Generator& gen, const Tensor& p);
// A permutation of 0..n-1 into an int64 `out` of n elements.
using RandpermKernel = void(const Tensor& out, Generator& gen);

}  // namespace flambeau
