"""Packed variable-length sequences for the recurrent layers.

A PackedSequence stores the time steps of a batch of sequences sorted by decreasing length,
back to back: ``data`` holds step 0 of every sequence, then step 1 of those still running,
and so on; ``batch_sizes[t]`` says how many sequences run at step t.
"""

from __future__ import annotations

from collections import namedtuple

import flambeau

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
    "invert_permutation",
]

_PackedBase = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                            "unsorted_indices"])  # fmt: skip


def invert_permutation(permutation):
    """The permutation p^-1 with p^-1[p[i]] = i (None stays None).

    >>> from flambeau.nn.utils.rnn import invert_permutation
    >>> invert_permutation(flambeau.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    order = [0] * permutation.numel()
    for i, p in enumerate(permutation.tolist()):
        order[p] = i
    return flambeau.tensor(order, dtype=flambeau.int64, device=permutation.device)


class PackedSequence(_PackedBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_* functions.

    >>> from flambeau.nn.utils.rnn import pack_sequence
    >>> seqs = [flambeau.tensor([1, 2]), flambeau.tensor([3, 4, 5])]
    >>> packed = pack_sequence(seqs, enforce_sorted=False)
    >>> packed.data, packed.batch_sizes
    (tensor([3, 1, 4, 2, 5]), tensor([2, 2, 1]))
    >>> packed.sorted_indices, packed.unsorted_indices
    (tensor([1, 0]), tensor([1, 0]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise ValueError("PackedSequence: batch_sizes must be given")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        si = self.sorted_indices
        ui = self.unsorted_indices
        si = si.to(device) if si is not None else None
        ui = ui.to(device) if ui is not None else None
        return type(self)(data, self.batch_sizes, si, ui)

    def double(self):
        return self.to(dtype=flambeau.float64)

    def float(self):
        return self.to(dtype=flambeau.float32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _lengths_list(lengths) -> list[int]:
    if isinstance(lengths, flambeau.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(
                f"pack_padded_sequence(): lengths must be a 1-D tensor, got shape "
                f"{tuple(lengths.shape)}"
            )
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of the given lengths.

    >>> from flambeau.nn.utils.rnn import pack_padded_sequence
    >>> padded = flambeau.tensor([[1, 2, 3], [4, 5, 0]])
    >>> packed = pack_padded_sequence(padded, [3, 2], batch_first=True)
    >>> packed.data, packed.batch_sizes
    (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """
    lens = _lengths_list(lengths)
    if input.dim() < 2:
        raise ValueError(
            f"pack_padded_sequence(): input must have at least 2 dims, got shape "
            f"{tuple(input.shape)}"
        )
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if len(lens) != batch:
        raise ValueError(
            f"pack_padded_sequence(): expected {batch} lengths (the batch size of input "
            f"{tuple(input.shape)}), got {len(lens)}"
        )
    if any(n <= 0 for n in lens):
        raise RuntimeError(
            f"pack_padded_sequence(): lengths must all be positive, got {lens} (empty "
            f"sequences cannot be packed)"
        )
    if max(lens) > steps:
        raise RuntimeError(
            f"pack_padded_sequence(): a length {max(lens)} exceeds the {steps} time steps of "
            f"input {tuple(input.shape)}"
        )
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(batch - 1)):
            raise RuntimeError(
                f"pack_padded_sequence(): lengths {lens} are not sorted in decreasing order; "
                f"sort them or pass enforce_sorted=False"
            )
        sorted_indices = None
    else:
        order = sorted(range(batch), key=lambda i: -lens[i])
        sorted_indices = flambeau.tensor(order, dtype=flambeau.int64, device=input.device)
        input = input.index_select(1, sorted_indices)
        lens = [lens[i] for i in order]
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = flambeau.cat([input[t, : batch_sizes[t]] for t in range(len(batch_sizes))], 0)
    return PackedSequence(data, flambeau.tensor(batch_sizes, dtype=flambeau.int64),
                          sorted_indices, None)  # fmt: skip


def pad_packed_sequence(sequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length=None):  # fmt: skip
    """The inverse of pack_padded_sequence: (padded (T, B, *), lengths (B,)).

    >>> from flambeau.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([flambeau.tensor([1, 2]), flambeau.tensor([3, 4, 5])],
    ...                        enforce_sorted=False)
    >>> pad_packed_sequence(packed, batch_first=True, padding_value=-1)
    (tensor([[ 1,  2, -1],
            [ 3,  4,  5]]), tensor([2, 3]))
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(
            f"pad_packed_sequence(): expected a PackedSequence, got {type(sequence).__name__}"
        )
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    batch = sizes[0]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"pad_packed_sequence(): expected total_length to be at least the length of the "
                f"longest sequence ({steps}), got {total_length}"
            )
        steps = total_length
    data = sequence.data
    feat = tuple(data.shape[1:])
    rows = []
    offset = 0
    for t in range(steps):
        bs = sizes[t] if t < len(sizes) else 0
        step = data[offset : offset + bs]
        offset += bs
        if bs < batch:
            fill = flambeau.full((batch - bs, *feat), padding_value, dtype=data.dtype,
                                 device=data.device)  # fmt: skip
            step = flambeau.cat([step, fill], 0)
        rows.append(step)
    padded = flambeau.stack(rows, 0)
    lengths = [sum(1 for s in sizes if s > b) for b in range(batch)]
    lengths_t = flambeau.tensor(lengths, dtype=flambeau.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices.to("cpu"))
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths_t


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):  # fmt: skip
    """Stacks tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padded.

    >>> from flambeau.nn.utils.rnn import pad_sequence
    >>> seqs = [flambeau.tensor([1, 2, 3]), flambeau.tensor([4]), flambeau.tensor([5, 6])]
    >>> pad_sequence(seqs, batch_first=True)
    tensor([[1, 2, 3],
            [4, 0, 0],
            [5, 6, 0]])
    """
    if isinstance(sequences, flambeau.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence(): received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"pad_sequence(): padding_side must be 'left' or 'right', got {padding_side!r}"
        )
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if s.dim() == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"pad_sequence(): every sequence must have shape (L, *{trailing}), but sequence "
                f"{i} has shape {tuple(s.shape)}"
            )
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = flambeau.full((missing, *trailing), padding_value, dtype=s.dtype,
                                 device=s.device)  # fmt: skip
            s = flambeau.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return flambeau.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False):
    """Splits a padded batch back into a list of tensors of the given lengths.

    >>> from flambeau.nn.utils.rnn import unpad_sequence
    >>> padded = flambeau.tensor([[1, 2, 3], [4, 0, 0]])
    >>> unpad_sequence(padded, flambeau.tensor([3, 1]), batch_first=True)
    [tensor([1, 2, 3]), tensor([4])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_list(lengths)
    return [padded_sequences[i, :n] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted: bool = True):
    """Packs a list of tensors of shape (L_i, *).

    >>> from flambeau.nn.utils.rnn import pack_sequence
    >>> seqs = [flambeau.tensor([1, 2, 3]), flambeau.tensor([4, 5]), flambeau.tensor([6])]
    >>> packed = pack_sequence(seqs)
    >>> packed.data, packed.batch_sizes
    (tensor([1, 4, 6, 2, 5, 3]), tensor([3, 2, 1]))
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The inverse of pack_sequence: a list of tensors of shape (L_i, *).

    >>> from flambeau.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> seqs = [flambeau.tensor([1]), flambeau.tensor([2, 3])]
    >>> packed = pack_sequence(seqs, enforce_sorted=False)
    >>> unpack_sequence(packed)
    [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
