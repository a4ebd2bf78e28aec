// Where kernel outputs live during a CPU run.
//
// SimpleAllocator: every value gets its own heap buffer (zero-filled unless the kernel asked for
// output_uninit), freed when the session drops
// the last Tensor using it (after the value's last use); forwarded outputs (KernelContext::forward)
// share their input's buffer instead.
//
// ArenaAllocator: one aligned arena of MemoryPlan::arena_bytes; every planned value is a Tensor
// over an ArenaSlice, a Storage that points at the value's planned offset inside the shared arena.
// Each slice is its own Storage object, so Tensor's copy-on-write (which copies when a Storage is
// shared) does not trigger merely because many values live in the same arena. A freshly allocated
// slot is zero-filled unless the plan makes the value an alias of another (in-place or view), in
// which case it holds the bytes of the value it aliases.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "executor/cpu/kernel.h"
#include "planner/memory_plan.h"

namespace xopt::exec {

class SimpleAllocator final : public OutputAllocator {
 public:
  Result<ir::Tensor> allocate(const ir::Value& value, ir::DType dtype,
                              const std::vector<int64_t>& dims, bool zero) override;
  // Values own nothing but their bytes' reference: an output may share an input's storage.
  bool can_forward() const override { return true; }
};

// Owned heap bytes left uninitialised (outputs their kernel writes in full).
class UninitStorage final : public ir::Storage {
 public:
  explicit UninitStorage(size_t size)
      : data_(std::make_unique_for_overwrite<std::byte[]>(size)), size_(size) {}
  const std::byte* data() const override { return data_.get(); }
  std::byte* mutable_data() override { return data_.get(); }
  size_t size() const override { return size_; }

 private:
  std::unique_ptr<std::byte[]> data_;
  size_t size_;
};

// Owned bytes aligned to `alignment` (at least 64).
class AlignedStorage final : public ir::Storage {
 public:
  AlignedStorage(size_t size, size_t alignment);
  ~AlignedStorage() override;
  AlignedStorage(const AlignedStorage&) = delete;
  AlignedStorage& operator=(const AlignedStorage&) = delete;
  const std::byte* data() const override { return data_; }
  std::byte* mutable_data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// `size` bytes at `offset` inside an arena; keeps the arena alive.
class ArenaSlice final : public ir::Storage {
 public:
  ArenaSlice(std::shared_ptr<AlignedStorage> arena, size_t offset, size_t size)
      : arena_(std::move(arena)), offset_(offset), size_(size) {}
  const std::byte* data() const override { return arena_->data() + offset_; }
  std::byte* mutable_data() override { return arena_->mutable_data() + offset_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<AlignedStorage> arena_;
  size_t offset_;
  size_t size_;
};

class ArenaAllocator final : public OutputAllocator {
 public:
  // Checks the plan (check_plan's error is returned as is) and allocates the arena.
  static Result<std::unique_ptr<ArenaAllocator>> create(const planner::MemoryPlan& plan);

  // The planned slot of `value`, refusing a size that differs from the plan (for a plan made for
  // a range of shapes: a size larger than planned). Values of type string
  // (stored out of line) get their own tensor, and so do unplanned values that may be (see below);
  // any other unplanned value is an error.
  Result<ir::Tensor> allocate(const ir::Value& value, ir::DType dtype,
                              const std::vector<int64_t>& dims, bool zero) override;

  // Values that need no place in a plan: outputs nobody reads, and graph outputs when the plan
  // keeps graph inputs and outputs outside the arena.
  static bool may_be_unplanned(const ir::Value& value, bool io_in_arena);

  const planner::PlannedValue* find(const std::string& name) const;
  // True when `t`'s bytes start at the planned offset of `pv`.
  bool is_in_slot(const ir::Tensor& t, const planner::PlannedValue& pv) const;
  // Copies `src` into the planned slot of `value` (memmove: the bytes may overlap) and returns the
  // tensor over the slot. Used for graph inputs planned inside the arena and for kernels that made
  // an output share another tensor's bytes instead of writing the slot they were given.
  Result<ir::Tensor> place(const ir::Value& value, const ir::Tensor& src);

  const std::byte* base() const { return arena_->data(); }
  size_t arena_bytes() const { return arena_->size(); }

 private:
  ArenaAllocator(const planner::MemoryPlan& plan, std::shared_ptr<AlignedStorage> arena);
  Result<ir::Tensor> slot(const ir::Value& value, ir::DType dtype, const std::vector<int64_t>& dims,
                          bool zero);

  const planner::MemoryPlan& plan_;
  std::shared_ptr<AlignedStorage> arena_;
  std::unordered_map<std::string, const planner::PlannedValue*> index_;
};

}  // namespace xopt::exec
