// Expandable segments: one reserved address range per stream and pool, about
// the device's size, whose pages are mapped when allocations need them and
// unmapped when they are free and the cache is emptied
// (docs/design/cuda-allocator.rst).
#include <algorithm>

#include "allocator/device_allocator.h"

namespace flambeau::cuda {

size_t DeviceAllocator::whole_page_bytes(const Block* b) const {
  const size_t start = size_t(b->ptr - b->expandable->base);
  const size_t lo = round_up(start, page_);
  const size_t hi = round_down(start + b->size, page_);
  return hi > lo ? hi - lo : 0;
}

ExpandableSegment* DeviceAllocator::new_expandable(void* stream, BlockPool* pool) {
  size_t free_bytes = 0, total = 0;
  device_memory(&free_bytes, &total);
  const size_t reserve = round_up(total, page_);
  void* base = nullptr;
  flb_cuda_status status = api_->reserve_va(api_->self, device_, reserve, &base);
  if (status == FLB_CUDA_OUT_OF_MEMORY) return nullptr;
  check(status, "reserve_va");

  auto seg = std::make_unique<ExpandableSegment>();
  seg->base = static_cast<char*>(base);
  seg->reserved = reserve;
  seg->page = page_;
  seg->stream = stream;
  seg->pool = pool;
  Block* all = new_block();
  all->ptr = seg->base;
  all->size = reserve;
  all->stream = stream;
  all->pool = pool;
  all->expandable = seg.get();
  all->mapped = false;
  seg->head = all;
  pool->unmapped.insert(all);
  stats_.segment.add(pool->is_small, 1);
  expandables_.push_back(std::move(seg));
  return expandables_.back().get();
}

bool DeviceAllocator::grow_expandable(AllocParams& p) {
  // Where to map: the unmapped range of this stream's segments that needs the
  // fewest new pages, counting a free mapped block just below it, which the
  // new pages extend (that is what keeps a segment one piece as it grows).
  Block* target = nullptr;
  size_t map_bytes = 0;
  BlockSet& unmapped = p.pool->unmapped;
  for (auto it = unmapped.lower_bound(p.stream, 0);
       it != unmapped.end() && (*it)->stream == p.stream; ++it) {
    Block* u = *it;
    const size_t below = u->prev != nullptr && u->prev->is_free() ? u->prev->size : 0;
    const size_t need = round_up(p.size - std::min(below, p.size), page_);
    if (need > u->size) continue;
    if (target == nullptr || need < map_bytes || (need == map_bytes && u->ptr < target->ptr)) {
      target = u;
      map_bytes = need;
    }
  }
  bool created = false;
  if (target == nullptr) {
    map_bytes = round_up(p.size, page_);
    if (!reserve_allowed(map_bytes)) return false;
    ExpandableSegment* seg = new_expandable(p.stream, p.pool);
    if (seg == nullptr) return false;
    target = seg->head;
    created = true;
    if (map_bytes > target->size) {  // larger than the whole device
      release_expandable(expandables_.size() - 1);
      return false;
    }
  }
  if (!reserve_allowed(map_bytes)) return false;

  flb_cuda_status status = api_->map(api_->self, device_, target->ptr, map_bytes);
  if (status != FLB_CUDA_OK) {
    if (created) release_expandable(expandables_.size() - 1);
    if (status == FLB_CUDA_OUT_OF_MEMORY) return false;
    fail("map");
  }
  ++stats_.num_device_alloc;
  target->expandable->mapped += map_bytes;
  stats_.reserved_bytes.add(p.pool->is_small, int64_t(map_bytes));

  unmapped.erase(target);
  if (map_bytes < target->size) {
    Block* rest = new_block();
    rest->ptr = target->ptr + map_bytes;
    rest->size = target->size - map_bytes;
    rest->stream = target->stream;
    rest->pool = target->pool;
    rest->expandable = target->expandable;
    rest->mapped = false;
    link_after(target, rest);
    target->size = map_bytes;
    unmapped.insert(rest);
  }
  target->mapped = true;
  Block* merged = merge_free_neighbours(target);
  merged->free_stamp = clock_;
  add_inactive_split(merged, +1);
  p.pool->blocks.insert(merged);
  return true;
}

size_t DeviceAllocator::unmap_free_pages(Block* b) {
  ExpandableSegment* seg = b->expandable;
  char* const start = b->ptr;
  char* const end = b->ptr + b->size;
  char* const lo = seg->base + round_up(size_t(start - seg->base), page_);
  char* const hi = seg->base + round_down(size_t(end - seg->base), page_);
  if (hi <= lo) return 0;  // no whole page: it shares its pages with live blocks
  const size_t bytes = size_t(hi - lo);
  check(api_->unmap(api_->self, device_, lo, bytes), "unmap");
  ++stats_.num_device_free;
  seg->mapped -= bytes;
  BlockPool* pool = b->pool;
  stats_.reserved_bytes.add(pool->is_small, -int64_t(bytes));
  add_inactive_split(b, -1);
  pool->blocks.erase(b);

  // [start, lo) stays mapped in b, [lo, hi) becomes `hole`, [hi, end) stays
  // mapped in a new block.
  Block* hole = b;
  if (lo > start) {
    hole = new_block();
    hole->stream = b->stream;
    hole->pool = pool;
    hole->expandable = seg;
    hole->ptr = lo;
    link_after(b, hole);
    b->size = size_t(lo - start);
  }
  hole->size = bytes;
  hole->mapped = false;
  if (end > hi) {
    Block* tail = new_block();
    tail->stream = b->stream;
    tail->pool = pool;
    tail->expandable = seg;
    tail->ptr = hi;
    tail->size = size_t(end - hi);
    tail->free_stamp = b->free_stamp;
    link_after(hole, tail);
    add_inactive_split(tail, +1);
    pool->blocks.insert(tail);
  }
  if (hole != b) {
    add_inactive_split(b, +1);
    pool->blocks.insert(b);
  }
  if (hole->prev != nullptr && !hole->prev->mapped) {
    Block* prev = hole->prev;
    pool->unmapped.erase(prev);
    merge(prev, hole);
    hole = prev;
  }
  if (hole->next != nullptr && !hole->next->mapped) {
    Block* next = hole->next;
    pool->unmapped.erase(next);
    merge(hole, next);
  }
  pool->unmapped.insert(hole);
  return bytes;
}

void DeviceAllocator::release_expandable(size_t index) {
  ExpandableSegment* seg = expandables_[index].get();
  Block* all = seg->head;
  check(api_->release_va(api_->self, device_, seg->base, seg->reserved), "release_va");
  seg->pool->unmapped.erase(all);
  stats_.segment.add(seg->pool->is_small, -1);
  recycle(all);
  expandables_.erase(expandables_.begin() + std::ptrdiff_t(index));
}

void DeviceAllocator::release_empty_expandables() {
  for (size_t i = expandables_.size(); i-- > 0;) {
    const Block* head = expandables_[i]->head;
    if (!head->mapped && head->next == nullptr) release_expandable(i);
  }
}

}  // namespace flambeau::cuda
