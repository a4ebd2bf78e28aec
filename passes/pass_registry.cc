#include "passes/pass_registry.h"

#include <algorithm>
#include <set>

namespace xopt::passes {

// The pipeline groups. Passes join them from their own files; a group runs its members in order.
static const internal::GroupRegistration kCleanup(GroupInfo{
    "cleanup",
    "removes no-op nodes, dead code and statically known Shape/Size results",
    /*fixpoint=*/true,
    kDefaultFixpointCap,
    {}});
static const internal::GroupRegistration kFold(GroupInfo{
    "fold",
    "evaluates computations whose inputs are all constants",
    true,
    kDefaultFixpointCap,
    {}});
static const internal::GroupRegistration kFuse(GroupInfo{
    "fuse", "merges operator chains into single fused operators", true, kDefaultFixpointCap, {}});
static const internal::GroupRegistration kPrecision(GroupInfo{
    "precision",
    "converts nodes to fp16/bf16 (--precision); runs after fuse, before plan",
    false,
    kDefaultFixpointCap,
    {}});
static const internal::GroupRegistration kPlan(GroupInfo{
    "plan", "orders the nodes and plans activation memory", false, kDefaultFixpointCap, {}});

PassRegistry& PassRegistry::global() {
  static PassRegistry registry;
  return registry;
}

void PassRegistry::add_pass(PassInfo info) {
  if (contains(info.name)) {
    errors_.push_back("pass '" + info.name + "' is registered twice");
    return;
  }
  std::string name = info.name;
  passes_.emplace(std::move(name), std::move(info));
}

void PassRegistry::add_group(GroupInfo info) {
  if (contains(info.name)) {
    errors_.push_back("group '" + info.name + "' is registered twice");
    return;
  }
  std::string name = info.name;
  groups_.emplace(std::move(name), std::move(info));
}

const PassInfo* PassRegistry::find_pass(std::string_view name) const {
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : &it->second;
}

const GroupInfo* PassRegistry::find_group(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : &it->second;
}

std::vector<const PassInfo*> PassRegistry::passes() const {
  std::vector<const PassInfo*> out;
  for (const auto& [name, info] : passes_) out.push_back(&info);
  return out;
}

std::vector<const GroupInfo*> PassRegistry::groups() const {
  std::vector<const GroupInfo*> out;
  for (const auto& [name, info] : groups_) out.push_back(&info);
  return out;
}

std::vector<std::string> PassRegistry::members(std::string_view group) const {
  std::vector<std::pair<int, std::string>> found;
  auto collect = [&](const std::string& name, const std::vector<GroupMembership>& memberships) {
    for (const auto& m : memberships)
      if (m.group == group) found.emplace_back(m.order, name);
  };
  for (const auto& [name, info] : passes_) collect(name, info.groups);
  for (const auto& [name, info] : groups_) collect(name, info.groups);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [order, name] : found) out.push_back(std::move(name));
  return out;
}

std::vector<std::string> PassRegistry::errors() const {
  std::vector<std::string> out = errors_;
  auto check = [&](const std::string& what, const std::vector<GroupMembership>& memberships) {
    for (const auto& m : memberships)
      if (!find_group(m.group)) out.push_back(what + " joins unknown group '" + m.group + "'");
  };
  for (const auto& [name, info] : passes_) check("pass '" + name + "'", info.groups);
  for (const auto& [name, info] : groups_) check("group '" + name + "'", info.groups);
  // A group that contains itself, directly or through other groups, would expand forever.
  for (const auto& [name, info] : groups_) {
    std::set<std::string> seen;
    std::vector<std::string> stack = members(name);
    while (!stack.empty()) {
      std::string m = std::move(stack.back());
      stack.pop_back();
      if (m == name) {
        out.push_back("group '" + name + "' contains itself");
        break;
      }
      if (find_group(m) && seen.insert(m).second)
        for (auto& sub : members(m)) stack.push_back(std::move(sub));
    }
  }
  return out;
}

}  // namespace xopt::passes
