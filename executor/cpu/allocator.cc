#include "executor/cpu/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "executor/cpu/broadcast.h"

namespace xopt::exec {

Result<ir::Tensor> SimpleAllocator::allocate(const ir::Value& value, ir::DType dtype,
                                             const std::vector<int64_t>& dims, bool zero) {
  for (int64_t d : dims)
    if (d < 0)
      return invalid_model("value '" + value.name() + "': negative dimension in " +
                           ir::dims_string(dims));
  if (zero || dtype == ir::DType::kString) return ir::Tensor(dtype, dims);
  const size_t nbytes = static_cast<size_t>(ir::numel(dims)) * ir::dtype_size(dtype);
  return ir::Tensor(dtype, dims, std::make_shared<UninitStorage>(nbytes));
}

AlignedStorage::AlignedStorage(size_t size, size_t alignment) : size_(size) {
  size_t a = std::max<size_t>(alignment, 64);
  if ((a & (a - 1)) != 0) a = 64;  // aligned_alloc wants a power of two
  size_t rounded = (std::max<size_t>(size, 1) + a - 1) / a * a;
  data_ = static_cast<std::byte*>(std::aligned_alloc(a, rounded));
  if (data_ == nullptr) throw std::bad_alloc();
  std::memset(data_, 0, rounded);
}

AlignedStorage::~AlignedStorage() {
  std::free(data_);
}

ArenaAllocator::ArenaAllocator(const planner::MemoryPlan& plan,
                               std::shared_ptr<AlignedStorage> arena)
    : plan_(plan), arena_(std::move(arena)) {
  for (const auto& v : plan_.values) index_.emplace(v.name, &v);
}

Result<std::unique_ptr<ArenaAllocator>> ArenaAllocator::create(const planner::MemoryPlan& plan) {
  XOPT_RETURN_IF_ERROR(planner::check_plan(plan));
  std::shared_ptr<AlignedStorage> arena;
  try {
    arena = std::make_shared<AlignedStorage>(plan.arena_bytes, plan.alignment);
  } catch (const std::bad_alloc&) {
    return invalid_argument("memory plan: cannot allocate an arena of " +
                            std::to_string(plan.arena_bytes) + " bytes");
  }
  return std::unique_ptr<ArenaAllocator>(new ArenaAllocator(plan, std::move(arena)));
}

const planner::PlannedValue* ArenaAllocator::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

bool ArenaAllocator::is_in_slot(const ir::Tensor& t, const planner::PlannedValue& pv) const {
  if (t.dtype() == ir::DType::kString || t.nbytes() == 0) return true;
  return t.raw_data() == static_cast<const void*>(base() + pv.offset);
}

Result<ir::Tensor> ArenaAllocator::slot(const ir::Value& value, ir::DType dtype,
                                        const std::vector<int64_t>& dims, bool zero) {
  for (int64_t d : dims)
    if (d < 0)
      return invalid_model("value '" + value.name() + "': negative dimension in " +
                           ir::dims_string(dims));
  if (dtype == ir::DType::kString) return ir::Tensor(dtype, dims);
  const planner::PlannedValue* pv = find(value.name());
  if (pv == nullptr)
    return invalid_argument("memory plan: value '" + value.name() + "' has no place in the plan");
  size_t nbytes = static_cast<size_t>(ir::numel(dims)) * ir::dtype_size(dtype);
  // A plan for one shape holds exactly its sizes; a plan for a range of shapes holds every value
  // at its offset in at most the bytes planned at the largest shapes.
  const bool range = !plan_.input_ranges.empty();
  if (range ? nbytes > pv->bytes : nbytes != pv->bytes)
    return invalid_argument("memory plan: value '" + value.name() + "' is " +
                            std::to_string(nbytes) + " bytes (" +
                            std::string(ir::dtype_name(dtype)) + " " + ir::dims_string(dims) +
                            ") but the plan reserved " + std::to_string(pv->bytes) +
                            (range ? " at the largest shapes of its range" : ""));
  auto storage = std::make_shared<ArenaSlice>(arena_, pv->offset, nbytes);
  if (zero && pv->alias_of.empty() && nbytes > 0) std::memset(storage->mutable_data(), 0, nbytes);
  return ir::Tensor(dtype, dims, std::move(storage), 0);
}

bool ArenaAllocator::may_be_unplanned(const ir::Value& value, bool io_in_arena) {
  const bool dead = !value.has_uses() && !value.is_graph_output();
  return dead || (value.is_graph_output() && !io_in_arena);
}

Result<ir::Tensor> ArenaAllocator::allocate(const ir::Value& value, ir::DType dtype,
                                            const std::vector<int64_t>& dims, bool zero) {
  if (find(value.name()) == nullptr && may_be_unplanned(value, plan_.io_in_arena))
    return SimpleAllocator().allocate(value, dtype, dims, zero);
  return slot(value, dtype, dims, zero);
}

Result<ir::Tensor> ArenaAllocator::place(const ir::Value& value, const ir::Tensor& src) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor t, slot(value, src.dtype(), src.dims(), /*zero=*/false));
  if (src.dtype() == ir::DType::kString) return src;
  if (src.nbytes() > 0) std::memmove(t.mutable_raw_data(), src.raw_data(), src.nbytes());
  return t;
}

}  // namespace xopt::exec
