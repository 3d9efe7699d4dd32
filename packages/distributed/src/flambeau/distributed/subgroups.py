"""new_subgroups and new_subgroups_by_enumeration: several groups at once, made with
new_group (every rank of the world calls them, as new_group)."""

from __future__ import annotations

import flambeau

from .process_group import get_process_group_ranks, get_rank, get_world_size, new_group

__all__ = ["new_subgroups", "new_subgroups_by_enumeration"]


def new_subgroups(
    group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """Split the ranks of `group` (the default group when None) into consecutive
    subgroups of `group_size` ranks; returns ``(the subgroup of this rank, every
    subgroup)``. Without `group_size`, the number of CUDA devices of the machine (as
    PyTorch; ValueError without CUDA). The world size must be a multiple of
    `group_size`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here: one subgroup of one
    >>> mine, every = dist.new_subgroups(group_size=1)
    >>> dist.get_process_group_ranks(mine), len(every)
    ([0], 1)
    >>> dist.destroy_process_group()
    """
    if group_size is None:
        if not flambeau.cuda.is_available():
            raise ValueError(
                "Default group size only takes effect when CUDA is available."
                "If your subgroup using a backend that does not depend on CUDA,"
                "please pass in 'group_size' correctly."
            )
        group_size = flambeau.cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(
            f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})"
        )
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by '{group_size=}'")
    ranks = get_process_group_ranks(group)
    return new_subgroups_by_enumeration(
        [ranks[i : i + group_size] for i in range(0, len(ranks), group_size)],
        timeout=timeout,
        backend=backend,
        pg_options=pg_options,
        group_desc=group_desc,
    )


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None, group_desc=None
):
    """Make a group of each list of global ranks in `ranks_per_subgroup_list` (lists
    that share no rank; a rank may be in none); returns ``(the subgroup of this rank,
    or None, every subgroup)``, where a subgroup this rank is not in is
    ``GroupMember.NON_GROUP_MEMBER``.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> mine, every = dist.new_subgroups_by_enumeration([[0]])
    >>> mine is every[0], dist.get_process_group_ranks(mine)
    (True, [0])
    >>> dist.destroy_process_group()
    """
    if ranks_per_subgroup_list is None or len(ranks_per_subgroup_list) == 0:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups, mine = [], None
    owner: dict[int, list] = {}  # rank -> the ranks of its subgroup, to find overlaps
    my_rank = get_rank()
    for ranks in ranks_per_subgroup_list:
        subgroup = new_group(
            ranks=ranks,
            timeout=timeout,
            backend=backend,
            pg_options=pg_options,
            group_desc=group_desc,
        )
        subgroups.append(subgroup)
        for rank in ranks:
            if rank in owner:
                raise ValueError(
                    f"Rank {rank} has appeared in both subgroup {owner[rank]} and {ranks}"
                )
            owner[rank] = ranks
            if rank == my_rank:
                mine = subgroup
    return mine, subgroups
