// 3x3 convolutions with stride 1 by Winograd's minimal filtering F(2x2, 3x3): each
// 2x2 block of outputs is computed from a 4x4 block of input as 16 elementwise products
// in the transformed domain instead of 36 multiply-adds, so the channel sums become 16
// GEMMs with 2.25x fewer multiply-adds than im2col's one. The transforms use only
// additions and halvings, so float32 results stay as accurate as im2col's.
//
// The choice of algorithm per shape, and the measurements behind it, are in
// docs/design/convolution-algorithms.rst.
#pragma once
#include "ops/nn_conv_geometry.h"

namespace flambeau {

// The shapes the Winograd kernels take: 2-D, 3x3, stride 1, dilation 1, one group,
// padding at most 2, and enough channels on both sides for the GEMMs to pay.
bool winograd_applies(const ConvGeometry& g);

// out = bias + conv(input, weight) (bias may be null). Tensors as in nn_conv_geometry.h.
// Returns false, having written nothing, when a weight is infinite or NaN: the
// transforms would turn inf - inf into NaN where the direct sum gives IEEE's result, so
// the caller computes such a convolution another way. (Blocks of input that are not
// finite are summed directly here.)
template <class T>
bool winograd_forward(const T* input, const T* weight, const T* bias, T* out,
                      const ConvGeometry& g);

// grad_input = bias + the gradient of winograd_forward's output with respect to its
// input: a convolution of grad_output with the weight flipped in space and transposed
// in channels, with padding 2 - pad. Returns false as winograd_forward does.
template <class T>
bool winograd_backward_input(const T* grad_output, const T* weight, const T* bias, T* grad_input,
                             const ConvGeometry& g);

// grad_weight = the gradient of winograd_forward's output with respect to its weight:
// per point of the 4x4 transform, (A grad_output A^T)^T (B^T input B) summed over every
// tile of every sample as one GEMM per point with the tiles as inner dimension, then
// G^T M G back to 3x3 taps. Returns false, having written nothing, where im2col is
// faster (fewer than 16 channels on a side; deep channels on small images, whose blocks
// of tiles are too short for the GEMMs) and when the input or grad_output holds an
// infinity or NaN (the transforms' differences would turn the direct sums' infinities
// into NaN).
template <class T>
bool winograd_backward_weight(const T* grad_output, const T* input, T* grad_weight,
                              const ConvGeometry& g);

}  // namespace flambeau
