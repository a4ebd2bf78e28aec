// The registry of passes and pass groups, by kebab-case name.
//
// A pass registers itself in its own file, naming the groups it belongs to and where in each group
// it runs, so adding a pass to a group is one line in that pass's file:
//
//   XOPT_REGISTER_PASS(EliminateDeadCode, "removes nodes and initializers nothing reads",
//                      {{"cleanup", 90}});
//
// Groups (cleanup, fold, fuse, precision, plan) are declared in pass_registry.cc. A fixpoint group runs its
// members again and again until none of them changes the model, at most `max_iterations` times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace xopt::passes {

// Membership of a pass (or group) in a group; members run in increasing `order`, ties by name.
struct GroupMembership {
  std::string group;
  int order = 50;
};

struct PassInfo {
  std::string name;
  std::string description;  // one line
  std::function<std::unique_ptr<Pass>()> create;
  std::vector<GroupMembership> groups;
};

inline constexpr int kDefaultFixpointCap = 25;

struct GroupInfo {
  std::string name;
  std::string description;  // one line
  bool fixpoint = false;
  int max_iterations = kDefaultFixpointCap;
  std::vector<GroupMembership> groups;  // groups may nest
};

class PassRegistry {
 public:
  // The registry the XOPT_REGISTER_* macros fill.
  static PassRegistry& global();

  // A second registration under a taken name is recorded in errors() and otherwise ignored.
  void add_pass(PassInfo info);
  void add_group(GroupInfo info);

  const PassInfo* find_pass(std::string_view name) const;
  const GroupInfo* find_group(std::string_view name) const;
  bool contains(std::string_view name) const { return find_pass(name) || find_group(name); }
  // Sorted by name.
  std::vector<const PassInfo*> passes() const;
  std::vector<const GroupInfo*> groups() const;
  // Names of a group's members (passes and groups) in the order they run.
  std::vector<std::string> members(std::string_view group) const;
  // Registration mistakes (duplicate names, membership in an unknown group, a group inside itself).
  std::vector<std::string> errors() const;

 private:
  std::map<std::string, PassInfo, std::less<>> passes_;
  std::map<std::string, GroupInfo, std::less<>> groups_;
  std::vector<std::string> errors_;
};

namespace internal {
struct PassRegistration {
  explicit PassRegistration(PassInfo info) { PassRegistry::global().add_pass(std::move(info)); }
};
struct GroupRegistration {
  explicit GroupRegistration(GroupInfo info) { PassRegistry::global().add_group(std::move(info)); }
};
}  // namespace internal

}  // namespace xopt::passes

// Registers `Class` (which has `static constexpr std::string_view kName`) with a one-line
// description and its group memberships, a braced list of {group, order}.
#define XOPT_REGISTER_PASS(Class, description, ...)                                               \
  static const ::xopt::passes::internal::PassRegistration XOPT_CONCAT(xopt_pass_reg_, __LINE__)(  \
      ::xopt::passes::PassInfo{std::string(Class::kName), description,                            \
                               [] { return std::unique_ptr<::xopt::passes::Pass>(new Class()); }, \
                               std::vector<::xopt::passes::GroupMembership> __VA_ARGS__})
