// Shared pieces of the sorting family: kernel signatures and the row layout
// every sorting kernel works on. A frontend moves the operated dim last and
// makes the input contiguous, so a kernel sees `rows` independent rows of `n`
// elements each, one after the other; results come back in the same layout.
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include "generated/kernel_signatures.h"
#include "ops/common.h"

namespace flambeau {

// Kernels (CPU ones in csrc/cpu/sort*.cpp). Inputs `in` are contiguous
// [rows, n] tensors; outputs are contiguous and freshly allocated.
// values/indices [rows, n]: each row sorted; ties keep their order.
// SortKernel: declared in kernels/table.yaml.
// values/indices [rows, k]: the k largest (or smallest), sorted when `sorted`.
// TopkKernel: declared in kernels/table.yaml.
// Select (what SelectKernel picks from each row): declared in kernels/table.yaml.
// values/indices [rows]: the k-th smallest (0-based) element, or the (nan)median.
// SelectKernel: declared in kernels/table.yaml.
// values/indices [rows]: most frequent value and its last index.
// ModeKernel: declared in kernels/table.yaml.
// values/indices [rows, n]: running max (is_max) or min and where it was reached.
// CumExtremeKernel: declared in kernels/table.yaml.
// out [rows, n] (in's dtype, floating).
// LogCumSumExpKernel: declared in kernels/table.yaml.
// out [rows, n] zero-filled by the kernel; adds grad [rows, k] at indices [rows, k].
// ScatterAddRowsKernel: declared in kernels/table.yaml.
// Unique rows of `in` [rows, n] (n = 1 for elements), compared lexicographically.
// sort: sort first (else only runs of equal consecutive rows collapse).
// Returns (unique rows [u, n], inverse [rows] int64, counts [u] int64); the
// inverse may come back empty unless `inverse` asks for it.
// UniqueKernel: declared in kernels/table.yaml.
// out [rows, m]: insertion points of values [rows, m] into seq [rows or 1, s];
// sorter (may be null) has seq's shape. out is int64 or int32.
// SearchSortedKernel: declared in kernels/table.yaml.
// out [length] zero-filled by the kernel: counts or sums of weights (may be null).
// BinCountKernel: declared in kernels/table.yaml.
// out [bins] zero-filled by the kernel: histogram of contiguous `in` over [lo, hi].
// HistcKernel: declared in kernels/table.yaml.

// The row layout: in (any strides) with dim `d` moved last, contiguous, as
// [rows, n]. A 0-dim input is one row of one element.
Tensor to_rows(const Tensor& in, int64_t d);
// Inverse of to_rows for a [rows, m] result: shaped like `sizes` with dim `d`
// of size m (dropped when !keep_dim), as a (possibly strided) view.
Tensor from_rows(const Tensor& rows, IntList sizes, int64_t d, int64_t m, bool keep_dim);
// Sorting needs an order: real and bool types.
void check_sortable(const Tensor& in, const char* op, bool allow_bool = true);

}  // namespace flambeau
