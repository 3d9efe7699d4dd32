// Shared pieces of the sorting family: kernel signatures and the row layout
// every sorting kernel works on. A frontend moves the operated dim last and
// makes the input contiguous, so a kernel sees `rows` independent rows of `n`
// elements each, one after the other; results come back in the same layout.
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include "ops/common.h"

namespace flambeau {

// Kernels (CPU ones in csrc/cpu/sort*.cpp). Inputs `in` are contiguous
// [rows, n] tensors; outputs are contiguous and freshly allocated.
// values/indices [rows, n]: each row sorted; ties keep their order.
using SortKernel = void(const Tensor& values, const Tensor& indices, const Tensor& in,
                        bool descending);
// values/indices [rows, k]: the k largest (or smallest), sorted when `sorted`.
using TopkKernel = void(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                        bool largest, bool sorted);
// What SelectKernel picks from each row.
enum class Select : int8_t { Kth, Median, NanMedian };
// values/indices [rows]: the k-th smallest (0-based) element, or the (nan)median.
using SelectKernel = void(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                          Select what);
// values/indices [rows]: most frequent value and its last index.
using ModeKernel = void(const Tensor& values, const Tensor& indices, const Tensor& in);
// values/indices [rows, n]: running max (is_max) or min and where it was reached.
using CumExtremeKernel = void(const Tensor& values, const Tensor& indices, const Tensor& in,
                              bool is_max);
// out [rows, n] (in's dtype, floating).
using LogCumSumExpKernel = void(const Tensor& out, const Tensor& in);
// out [rows, n] zero-filled by the kernel; adds grad [rows, k] at indices [rows, k].
using ScatterAddRowsKernel = void(const Tensor& out, const Tensor& grad, const Tensor& indices);
// Unique rows of `in` [rows, n] (n = 1 for elements), compared lexicographically.
// sort: sort first (else only runs of equal consecutive rows collapse).
// Returns (unique rows [u, n], inverse [rows] int64, counts [u] int64); the
// inverse may come back empty unless `inverse` asks for it.
using UniqueKernel = std::tuple<Tensor, Tensor, Tensor>(const Tensor& in, bool sort, bool inverse);
// out [rows, m]: insertion points of values [rows, m] into seq [rows or 1, s];
// sorter (may be null) has seq's shape. out is int64 or int32.
using SearchSortedKernel = void(const Tensor& out, const Tensor& seq, const Tensor& values,
                                const Tensor& sorter, bool right);
// out [length] zero-filled by the kernel: counts or sums of weights (may be null).
using BinCountKernel = void(const Tensor& out, const Tensor& in, const Tensor& weights);
// out [bins] zero-filled by the kernel: histogram of contiguous `in` over [lo, hi].
using HistcKernel = void(const Tensor& out, const Tensor& in, double lo, double hi);

// The row layout: in (any strides) with dim `d` moved last, contiguous, as
// [rows, n]. A 0-dim input is one row of one element.
Tensor to_rows(const Tensor& in, int64_t d);
// Inverse of to_rows for a [rows, m] result: shaped like `sizes` with dim `d`
// of size m (dropped when !keep_dim), as a (possibly strided) view.
Tensor from_rows(const Tensor& rows, IntList sizes, int64_t d, int64_t m, bool keep_dim);
// Writes `result` into out[i] (resized) or returns it when no out= was given.
Tensor write_out(const std::vector<Tensor>& out, size_t i, const Tensor& result, const char* op);
// Writes `result` into a single out= (resized) or returns it.
Tensor into_out(const OutArg& out, const Tensor& result, const char* op);
// Checks a tuple out= has `n` tensors.
void check_out_tuple(const std::vector<Tensor>& out, size_t n, const char* op);
// Sorting needs an order: real and bool types.
void check_sortable(const Tensor& in, const char* op, bool allow_bool = true);

}  // namespace flambeau
