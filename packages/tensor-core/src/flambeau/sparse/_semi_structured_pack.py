"""Packing of semi-structured (2:4) sparse matrices (see docs/design/sparse.rst).

A matrix is cut, along each row, into groups of ``group`` consecutive elements (4; 2
for float32 under CUTLASS, which treats a float32 as two 16-bit halves and so needs
1:2) of which half are kept: the *values* (rows x cols/2, in row order) and their
absolute *column* indices. Where a group holds fewer nonzeros than it keeps, zeros fill
it in the order the hardware's encoding picks them (positions 2, 3, 0, 1), so the
metadata matches PyTorch's bit for bit.

The metadata of a group is a 4-bit code: the positions (0..3 within four 16-bit
halves) of its two kept elements, ``first | second << 2``; codes of consecutive groups
are packed low bits first into 16-bit words (32-bit for int8 under CUTLASS). CUTLASS
then stores the words in its ``ColumnMajorInterleaved<2>`` order (``_cutlass_order``);
the cuSPARSELt form of flambeau keeps them in row order, after the values, in one
buffer of the matrix's dtype.
"""

from __future__ import annotations

import flambeau

# Preference among a group's zeros when it holds fewer nonzeros than it keeps.
_ZERO_PREFERENCE = {4: (1, 0, 3, 2), 2: (0, 1)}


def select(dense, group: int):
    """(values, cols) of a 2-D dense matrix, keeping half of each group of ``group``
    elements; raises RuntimeError if a group holds more nonzeros than that."""
    rows, cols = dense.shape
    keep = group // 2
    grouped = dense.detach().reshape(rows, cols // group, group)
    nonzero = grouped.ne(0)
    counts = nonzero.sum(-1)
    if bool((counts > keep).any()):
        r, g = (int(i) for i in (counts > keep).nonzero()[0])
        pattern = "2:4" if group == 4 else "1:2 (float32 is stored as pairs of halves)"
        raise RuntimeError(
            f"Error original_tensor is not {pattern} semi-structured sparse! Row {r}, columns "
            f"{g * group}..{g * group + group - 1} hold {int(counts[r, g])} nonzero elements; "
            f"at most {keep} of every {group} consecutive elements of a row may be nonzero."
        )
    preference = flambeau.tensor(_ZERO_PREFERENCE[group], device=dense.device)
    score = nonzero.to(flambeau.int64) * group + preference
    position = score.topk(keep, dim=-1).indices.sort(dim=-1).values
    starts = flambeau.arange(0, cols, group, device=dense.device).unsqueeze(-1)
    values = dense.reshape(rows, cols // group, group).gather(-1, position)
    return values.reshape(rows, cols // 2), (position + starts).reshape(rows, cols // 2)


def expand(values, cols, shape):
    """The dense matrix of (values, cols); differentiable with respect to values."""
    zeros = flambeau.zeros(tuple(shape), dtype=values.dtype, device=values.device)
    return zeros.scatter(1, cols, values)


# ---- metadata codes ----------------------------------------------------------------------


def _codes(cols, group: int):
    """The 4-bit code of each group of kept elements: (rows, groups)."""
    rows = cols.shape[0]
    if group == 4:
        within = (cols % 4).reshape(rows, -1, 2)
        return within[..., 0] | (within[..., 1] << 2)
    half = (cols % 2) * 2  # float32 pairs: the kept element's first 16-bit half
    return half | ((half + 1) << 2)


def _positions(codes, group: int):
    """Inverse of _codes: the absolute column of each kept element, (rows, cols/2)."""
    rows, groups = codes.shape
    if group == 4:
        within = flambeau.stack([codes & 3, (codes >> 2) & 3], dim=-1)
        starts = flambeau.arange(0, groups * 4, 4, device=codes.device).unsqueeze(-1)
        return (within + starts).reshape(rows, groups * 2)
    starts = flambeau.arange(0, groups * 2, 2, device=codes.device)
    return (codes & 3) // 2 + starts


def _words(codes, word_dtype):
    """Codes packed low bits first into words of word_dtype (int16 or int32)."""
    bits = 16 if word_dtype is flambeau.int16 else 32
    per_word = bits // 4
    rows = codes.shape[0]
    shifts = flambeau.arange(0, bits, 4, device=codes.device)
    words = (codes.to(flambeau.int64).reshape(rows, -1, per_word) << shifts).sum(-1)
    words = words - (words >= 2 ** (bits - 1)).to(flambeau.int64) * 2**bits  # two's complement
    return words.to(word_dtype)


def _unwords(words):
    """Inverse of _words: (rows, words * per_word) codes."""
    bits = 16 if words.dtype is flambeau.int16 else 32
    shifts = flambeau.arange(0, bits, 4, device=words.device)
    codes = (words.to(flambeau.int64).unsqueeze(-1) >> shifts) & 0xF
    return codes.reshape(words.shape[0], -1)


# ---- CUTLASS -----------------------------------------------------------------------------


def _cutlass_order(rows: int, n_words: int, word_dtype, device):
    """Where each word (r, c) of the row-order metadata goes in CUTLASS's flat storage:
    rows are interleaved in blocks of 32 (16-bit words) or 16 (32-bit), 2x2 blocks of
    words are transposed, and the matrix is stored column-major in pairs of columns."""
    block, stride = (32, 4) if word_dtype is flambeau.int16 else (16, 2)
    r = flambeau.arange(rows, device=device).unsqueeze(-1).expand(rows, n_words)
    c = flambeau.arange(n_words, device=device).unsqueeze(0).expand(rows, n_words)
    r = r - r % block + (r % 8) * stride + (r % block) // 8
    swap = (r % 2) - (c % 2)  # +1: odd row, even column; -1: even row, odd column
    r, c = r - swap, c + swap
    return ((c // 2) * rows * 2 + r * 2 + c % 2).reshape(-1)


def cutlass_word_dtype(dtype):
    return flambeau.int32 if dtype is flambeau.int8 else flambeau.int16


def cutlass_pack(values, cols, group: int):
    """(packed, meta) in CUTLASS's layout: packed is the values, meta its metadata."""
    words = _words(_codes(cols, group), cutlass_word_dtype(values.dtype))
    order = _cutlass_order(*words.shape, words.dtype, words.device)
    meta = flambeau.zeros(words.numel(), dtype=words.dtype, device=words.device)
    meta = meta.scatter(0, order, words.reshape(-1))
    return values, meta.reshape(words.shape)


def cutlass_unpack(packed, meta, group: int):
    """(values, cols) of CUTLASS's (packed, meta)."""
    rows, half = packed.shape
    word_dtype = cutlass_word_dtype(packed.dtype)
    per_word = (16 if word_dtype is flambeau.int16 else 32) // 4
    expected = (rows, half * 2 // group // per_word)
    if meta.dtype is not word_dtype or tuple(meta.shape) != expected:
        raise ValueError(
            f"CUTLASS metadata of packed values of shape {tuple(packed.shape)} and dtype "
            f"{packed.dtype} must be {word_dtype} of shape {expected}, but got {meta.dtype} of "
            f"shape {tuple(meta.shape)}"
        )
    order = _cutlass_order(rows, expected[1], word_dtype, meta.device)
    words = meta.reshape(-1).gather(0, order).reshape(expected)
    return packed, _positions(_unwords(words), group)


# ---- cuSPARSELt (flambeau's CPU form) ----------------------------------------------------


def cusparselt_pack(values, cols):
    """One 1-D buffer of the values' dtype: the values, then the row-order 16-bit
    metadata words reinterpreted as that dtype."""
    words = _words(_codes(cols, 4), flambeau.int16)
    return flambeau.cat([values.reshape(-1), words.reshape(-1).view(values.dtype)])


def cusparselt_split(packed, shape):
    """(values, int16 metadata words) of a cuSPARSELt buffer for a matrix of shape."""
    rows, cols = shape
    kept = rows * cols // 2
    n_words = rows * cols // 16
    expected = kept + n_words * 2 // packed.element_size()
    if packed.numel() != expected:
        raise ValueError(
            f"a cuSPARSELt buffer for shape {tuple(shape)} and dtype {packed.dtype} holds "
            f"{expected} elements, but got {packed.numel()}"
        )
    flat = packed.reshape(-1)
    words = flat[kept:].contiguous().view(flambeau.int16).reshape(rows, -1)
    return flat[:kept].reshape(rows, -1), words


def cusparselt_unpack(packed, shape):
    """(values, cols) of a cuSPARSELt buffer."""
    values, words = cusparselt_split(packed, shape)
    return values, _positions(_unwords(words), 4)
