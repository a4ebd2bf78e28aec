// Cast(x) <to = type of x>  ==>  x;
// Cast(Cast(x) <to = T1>) <to = type of x>, T1 holding every value of x's type  ==>  x;
// Cast(Cast(x) <to = T1>) <to = T2>, the same condition  ==>  Cast(x) <to = T2>.
//
// The chains come from exporters that cast around each op (Paddle2ONNX's int32 <-> int64 index
// arithmetic, float <-> double round trips, bool masks cast twice). Dropping the middle type is
// exact only when it holds every value of the source type (a widening cast) and converting that
// value on to T2 gives what converting the source gives: always when T1 is an integer type (the
// same integer wraps or rounds the same way) or T2 a float or bool type, and for an integer T2
// after a float T1 only when T2 holds every source value too (out-of-range float-to-integer
// conversion is not the wrap-around an integer cast does). eliminate-noops removes same-type casts
// as well, but it runs in `cleanup`, which `fold,fuse` leaves out.
#include <unordered_set>

#include "passes/fuse/fuse_util.h"
#include "passes/fuse/node_rewrite_pass.h"
#include "passes/pass_registry.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using fuse::is_onnx_op;
using ir::DType;

bool int_type(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kInt64:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}
bool real_type(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat || t == DType::kDouble;
}

// Bits of an integer type's range, and whether it is signed.
int int_bits(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
      return 8;
    case DType::kInt16:
    case DType::kUInt16:
      return 16;
    case DType::kInt32:
    case DType::kUInt32:
      return 32;
    default:
      return 64;
  }
}
bool signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
// Significand bits of a float type: integers up to 2^bits are exact.
int significand_bits(DType t) {
  switch (t) {
    case DType::kBFloat16:
      return 8;
    case DType::kFloat16:
      return 11;
    case DType::kFloat:
      return 24;
    default:
      return 53;
  }
}

// True when type `to` represents every value of type `from` exactly.
bool holds_all(DType from, DType to) {
  if (from == to) return true;
  if (from == DType::kBool) return int_type(to) || real_type(to);
  if (real_type(from)) {
    if (!real_type(to) || significand_bits(to) < significand_bits(from)) return false;
    // bfloat16 has float's exponent range, float16 a narrower one: float16 -> bfloat16 loses.
    return !(from == DType::kBFloat16 && to == DType::kFloat16) &&
           !(from == DType::kFloat16 && to == DType::kBFloat16);
  }
  if (!int_type(from)) return false;
  // Magnitude bits of the source (its sign is kept by a signed or real target only).
  const int magnitude = int_bits(from) - (signed_int(from) ? 1 : 0);
  if (real_type(to)) return significand_bits(to) >= magnitude;
  if (!int_type(to)) return false;
  if (signed_int(from) && !signed_int(to)) return false;
  return int_bits(to) - (signed_int(to) ? 1 : 0) >= magnitude;
}

// Cast(Cast(x) <to = mid>) <to = to> equals Cast(x) <to = to> for every x of type `from`.
bool middle_is_redundant(DType from, DType mid, DType to) {
  if (!holds_all(from, mid)) return false;
  if (from == DType::kBool || int_type(mid) || to == from) return true;
  if (real_type(to) || to == DType::kBool) return true;
  return int_type(to) && holds_all(from, to);
}

class FuseCasts final : public fuse::NodeRewritePass {
 public:
  static constexpr std::string_view kName = "fuse-casts";
  std::string_view name() const override { return kName; }

 protected:
  bool rewrite(ir::Graph& g, ir::Node* cast, std::unordered_set<const ir::Node*>& removed,
               PassContext& ctx) override {
    if (!is_onnx_op(*cast, "Cast") || cast->num_outputs() != 1) return false;
    ir::Value* y = cast->input(0);
    ir::Value* out = cast->output(0);
    if (y == nullptr || !y->is_tensor() || out->dtype() == DType::kUndefined) return false;
    const DType to = out->dtype();
    if (y->dtype() == to) {
      if (!bypass_node(g, cast, out, y)) return false;
      removed.insert(cast);
      ctx.count("same-type");
      return true;
    }
    ir::Node* inner = y->producer();
    if (inner == nullptr || !is_onnx_op(*inner, "Cast")) return false;
    ir::Value* x = inner->input(0);
    if (x == nullptr || !x->is_tensor() || !middle_is_redundant(x->dtype(), y->dtype(), to))
      return false;
    if (x->dtype() == to) {
      if (!bypass_node(g, cast, out, x)) return false;
      removed.insert(cast);
      ctx.count("round-trip");
    } else {
      cast->replace_input(y, x);
      ctx.count("chain");
    }
    if (y->uses().empty() && !name_is_visible(y)) {
      g.remove_node(inner);
      removed.insert(inner);
    }
    return true;
  }
};

}  // namespace

XOPT_REGISTER_PASS(FuseCasts,
                   "removes same-type Casts and the middle of Cast chains whose middle type holds "
                   "every value",
                   {{"fuse", 3}});

}  // namespace xopt::passes
