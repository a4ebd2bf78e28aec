// fuse-attention: scaled dot-product attention with its head split/merge and projections becomes
// com.microsoft.MultiHeadAttention.
#include <cstdio>
#include <map>
#include <string>

#include "tests/fusion_xfmr/xfmr_test_util.h"

namespace xopt {
namespace {

// "{v0, v1, ...}": n deterministic values in [-1, 1].
std::string values(int n, int seed) {
  std::string s = "{";
  uint32_t state = 2654435761u * static_cast<uint32_t>(seed + 1);
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", i ? ", " : "", (state >> 8) / 8388608.0 - 1.0);
    s += buf;
  }
  return s + "}";
}

// Replaces each $NAME in `text`.
std::string fill(std::string text, const std::map<std::string, std::string>& subs) {
  for (const auto& [key, value] : subs) {
    for (size_t pos; (pos = text.find("$" + key)) != std::string::npos;)
      text.replace(pos, key.size() + 1, value);
  }
  return text;
}

// BERT as Hugging Face exports it: separate Q/K/V projections with bias, [B,S,D] -> [B,S,H,E] ->
// [B,H,S,E] (K to [B,H,E,T]), scores / sqrt(E) + a padding mask [B,1,1,T], Softmax, merge back.
// B=2, S=4, D=8, H=2, E=4.
std::string hf_bert(const std::string& mask_type, const std::string& softmax_axis = "-1") {
  return fill(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,8] x, float[$MASK] mask) => (float[2,4,8] y)
       <float[8,8] wq = $WQ, float[8] bq = $BQ, float[8,8] wk = $WK, float[8] bk = $BK,
        float[8,8] wv = $WV, float[8] bv = $BV, int64[4] split = {2, 4, 2, 4},
        int64[3] merge = {2, 4, 8}, float sqrt_e = {2.0}> {
      qm = MatMul(x, wq)
      q = Add(qm, bq)
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      km = MatMul(x, wk)
      k = Add(bk, km)
      kr = Reshape(k, split)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      vm = MatMul(x, wv)
      v = Add(vm, bv)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(qt, kt)
      scd = Div(sc, sqrt_e)
      scm = Add(scd, mask)
      p = Softmax <axis = $AXIS> (scm)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })",
              {{"MASK", mask_type},
               {"AXIS", softmax_axis},
               {"WQ", values(64, 1)},
               {"BQ", values(8, 2)},
               {"WK", values(64, 3)},
               {"BK", values(8, 4)},
               {"WV", values(64, 5)},
               {"BV", values(8, 6)}});
}

TEST(FuseAttention, HuggingFaceBertWithPaddingMask) {
  const std::string before = hf_bert("2,1,1,4");
  std::string bias = values(8, 2);
  bias = bias.substr(0, bias.size() - 1) + ", " + values(8, 4).substr(1);
  bias = bias.substr(0, bias.size() - 1) + ", " + values(8, 6).substr(1);
  EXPECT_FUSES(
      "fuse-attention", before,
      fill(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x, float[2,1,1,4] mask) => (float[2,4,8] y)
       <float[8,8] wq = $WQ, float[8,8] wk = $WK, float[8,8] wv = $WV,
        float[24] mha_qkv_bias = $BIAS, int64[4] mha_attention_bias_dims = {2, 1, 4, 4}> {
      mha_q = MatMul(x, wq)
      mha_k = MatMul(x, wk)
      mha_v = MatMul(x, wv)
      mha_attention_bias = Expand(mask, mha_attention_bias_dims)
      y = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.5>
          (mha_q, mha_k, mha_v, mha_qkv_bias, , mha_attention_bias)
    })",
           {{"WQ", values(64, 1)}, {"WK", values(64, 3)}, {"WV", values(64, 5)}, {"BIAS", bias}}));
  test::expect_numerically_equal("fuse-attention", before);
}

// torch.nn.MultiheadAttention as exported (sequence-major, after folding): one packed in_proj
// MatMul + Slice into Q/K/V, [S,B,D] -> [S,B*H,E] -> [B*H,S,E], Q scaled before the product, a
// constant causal mask [1,S,S], the merge [B*H,S,E] -> [S,B*H,E] -> [S*B,D] and the out_proj Gemm.
// B=2, S=4, D=8, H=2, E=4.
std::string torch_mha(const std::string& mask_dims, const std::string& mask,
                      bool back_to_tokens = false) {
  const std::string tail = back_to_tokens ? R"(
      g8 = Gemm <transB = 1> (r, wo, bo)
      g3 = Reshape(g8, sbd)
      y = Transpose <perm = [1, 0, 2]> (g3)
    })"
                                          : R"(
      y = Gemm <transB = 1> (r, wo, bo)
    })";
  return fill(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,8] x) => (float[$YDIMS] y)
       <float[8,24] w_in = $WIN, float[24] b_in = $BIN, float[8,8] wo = $WO, float[8] bo = $BO,
        int64[1] s0 = {0}, int64[1] s8 = {8}, int64[1] s16 = {16}, int64[1] s24 = {24},
        int64[1] last = {-1}, int64[3] heads = {4, 4, 4}, int64[2] merged = {8, 8},
        $SBD float scale = {2.0}, float[$MDIMS] mask = $MASK> {
      xt = Transpose <perm = [1, 0, 2]> (x)
      mm = MatMul(xt, w_in)
      a = Add(b_in, mm)
      qs = Slice(a, s0, s8, last)
      ks = Slice(a, s8, s16, last)
      vs = Slice(a, s16, s24, last)
      qr = Reshape(qs, heads)
      qt = Transpose <perm = [1, 0, 2]> (qr)
      kr = Reshape(ks, heads)
      vr = Reshape(vs, heads)
      vt = Transpose <perm = [1, 0, 2]> (vr)
      qd = Div(qt, scale)
      kt = Transpose <perm = [1, 2, 0]> (kr)
      sc = MatMul(qd, kt)
      sm = Add(sc, mask)
      p = Softmax <axis = -1> (sm)
      o = MatMul(p, vt)
      ot = Transpose <perm = [1, 0, 2]> (o)
      r = Reshape(ot, merged)$TAIL)",
              {{"TAIL", tail},
               {"YDIMS", back_to_tokens ? "2,4,8" : "8,8"},
               {"WIN", values(192, 11)},
               {"BIN", values(24, 12)},
               {"WO", values(64, 13)},
               {"BO", values(8, 14)},
               {"MDIMS", mask_dims},
               {"SBD", back_to_tokens ? "int64[3] sbd = {4, 2, 8}," : ""},
               {"MASK", mask}});
}

constexpr const char* kCausal4 =
    "{0, -1e9, -1e9, -1e9, 0, 0, -1e9, -1e9, 0, 0, 0, -1e9, 0, 0, 0, 0}";

TEST(FuseAttention, TorchPackedSequenceMajorCausal) {
  const std::string before = torch_mha("1,4,4", kCausal4);
  auto r = test::run_pipeline("fuse-attention", before, nullptr, test::kWithinRounding);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  // The weights are the packed columns of w_in; check their names and the node structure.
  const std::string want = test::canonical(fill(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x) => (float[8,8] y)
       <float[8,8] wo = $WO, float[8] bo = $BO, float[8,8] w_in_q = $W8, float[8,8] w_in_k = $W8,
        float[8,8] w_in_v = $W8, float[24] mha_qkv_bias = $BIN,
        int64[2] mha_out_shape = {8, 8}> {
      mha_q = MatMul(x, w_in_q)
      mha_k = MatMul(x, w_in_k)
      mha_v = MatMul(x, w_in_v)
      mha = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.5, unidirectional = 1>
          (mha_q, mha_k, mha_v, mha_qkv_bias)
      mha_sbd = Transpose <perm = [1, 0, 2]> (mha)
      r = Reshape(mha_sbd, mha_out_shape)
      y = Gemm <transB = 1> (r, wo, bo)
    })",
                                                {{"WO", values(64, 13)},
                                                 {"BO", values(8, 14)},
                                                 {"W8", values(64, 0)},
                                                 {"BIN", values(24, 12)}}));
  EXPECT_EQ(r.text, want);
  test::expect_numerically_equal("fuse-attention", before);
}

// With torch's out_proj Gemm and the reshape/transpose back to [B,S,D] after it, the projection
// joins too: MatMul(attention, W^T) + bias on [B,S,D] (the bias Add is left for
// fuse-skip-layernorm to take).
TEST(FuseAttention, TorchOutProjectionFolded) {
  const std::string before = torch_mha("1,4,4", kCausal4, true);
  auto r = test::run_pipeline("fuse-attention", before, nullptr, test::kWithinRounding);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  const std::string want = test::canonical(
      fill(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x) => (float[2,4,8] y)
       <float[8] bo = $BO, float[8,8] w_in_q = $W8, float[8,8] w_in_k = $W8,
        float[8,8] w_in_v = $W8, float[24] mha_qkv_bias = $BIN, float[8,8] wo_t = $W8> {
      mha_q = MatMul(x, w_in_q)
      mha_k = MatMul(x, w_in_k)
      mha_v = MatMul(x, w_in_v)
      mha = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.5, unidirectional = 1>
          (mha_q, mha_k, mha_v, mha_qkv_bias)
      out_proj = MatMul(mha, wo_t)
      y = Add(out_proj, bo)
    })",
           {{"BO", values(8, 14)}, {"W8", values(64, 0)}, {"BIN", values(24, 12)}}));
  EXPECT_EQ(r.text, want);
  test::expect_numerically_equal("fuse-attention", before);
}

// Scaling on Q and K separately (0.5 and 0.25) multiplies into one scale, 0.125.
TEST(FuseAttention, ScaleOnQAndKSeparately) {
  const std::string before = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y)
       <int64[4] split = {1, 4, 2, 4}, int64[3] merge = {1, 4, 8}, float qs = {0.5},
        float ks = {0.25}> {
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      q2 = Mul(qt, qs)
      kr = Reshape(k, split)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      k2 = Mul(ks, kt)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(q2, k2)
      p = Softmax(sc)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })";
  EXPECT_FUSES("fuse-attention", before, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y) {
      y = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.125> (q, k, v)
    })");
  EXPECT_EQ(test::ops_after("fuse-attention", before),
            std::vector<std::string>{"com.microsoft.MultiHeadAttention"});
  test::expect_numerically_equal("fuse-attention", before);
}

// Projections over flattened tokens [B*S, D] (2-D MatMuls), heads split from there; cross
// attention with T = 3 keys for S = 4 queries.
TEST(FuseAttention, FlattenedTokensCrossAttention) {
  const std::string before = fill(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8,8] x, float[6,8] m) => (float[8,8] y)
       <float[8,8] wq = $WQ, float[8,8] wk = $WK, float[8,8] wv = $WV, float[8] bv = $BV,
        int64[4] qsplit = {2, 4, 2, 4}, int64[4] ksplit = {2, 3, 2, 4}, int64[2] merge = {8, 8},
        float sqrt_e = {2.0}> {
      q = MatMul(x, wq)
      qr = Reshape(q, qsplit)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      k = MatMul(m, wk)
      kr = Reshape(k, ksplit)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      vm = MatMul(m, wv)
      v = Add(vm, bv)
      vr = Reshape(v, ksplit)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(qt, kt)
      scd = Div(sc, sqrt_e)
      p = Softmax(scd)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })",
                                  {{"WQ", values(64, 21)},
                                   {"WK", values(64, 22)},
                                   {"WV", values(64, 23)},
                                   {"BV", values(8, 24)}});
  auto r = test::run_pipeline("fuse-attention", before, nullptr, test::kWithinRounding);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_NE(r.text.find("MultiHeadAttention<num_heads = 2"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("Softmax"), std::string::npos) << r.text;
  test::expect_numerically_equal("fuse-attention", before);
}

// A general constant mask (not causal) becomes a constant attention_bias [1,1,S,T].
TEST(FuseAttention, ConstantMaskBecomesAttentionBias) {
  const std::string mask = "{0, -1e9, 0, -1e9, 0, 0, 0, -1e9, -1e9, 0, 0, 0, 0, 0, 0, -1e9}";
  const std::string before = torch_mha("4,4", mask);
  auto r = test::run_pipeline("fuse-attention", before, nullptr, test::kWithinRounding);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_TRUE(r.changed);
  EXPECT_NE(r.text.find("float[1,1,4,4] mha_attention_bias"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("unidirectional"), std::string::npos) << r.text;
  test::expect_numerically_equal("fuse-attention", before);
}

// Where(causal, scores, -inf-ish) is the same causal mask.
TEST(FuseAttention, WhereCausalMask) {
  const std::string before = fill(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y)
       <int64[4] split = {1, 4, 2, 4}, int64[3] merge = {1, 4, 8}, float half = {0.5},
        bool[4,4] keep = {1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1}, float fill = {-1e30}> {
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      kr = Reshape(k, split)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(qt, kt)
      scs = Mul(sc, half)
      scm = Where(keep, scs, fill)
      p = Softmax(scm)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })",
                                  {});
  EXPECT_FUSES("fuse-attention", before, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y) {
      y = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.5, unidirectional = 1> (q, k, v)
    })");
  test::expect_numerically_equal("fuse-attention", before);
}

// A mask [B,1,S,1] broadcasts along the keys: no attention_bias shape takes it.
TEST(FuseAttention, MaskOfAnotherShapeDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-attention", hf_bert("2,1,4,1"));
}

// Softmax over the query axis is not attention.
TEST(FuseAttention, SoftmaxOverWrongAxisDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-attention", hf_bert("2,1,1,4", "-2"));
}

// K split into heads the other way round ([B,T,E,H]: head index minor) does not pair with Q's
// heads: not multi-head attention.
TEST(FuseAttention, MismatchedHeadSplitDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-attention", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y)
       <int64[4] split = {1, 4, 2, 4}, int64[4] ksplit = {1, 4, 4, 2}, int64[3] merge = {1, 4, 8}> {
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      kr = Reshape(k, ksplit)
      kt = Transpose <perm = [0, 3, 2, 1]> (kr)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(qt, kt)
      p = Softmax(sc)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })");
}

// torch's SDPA export (transformers 5 BERT): sqrt(scale) on Q and on K^T, a -inf padding mask
// from a bool input (Where(keep, 0, -inf)), and the guard Where(IsNaN(P), 0, P) after the softmax
// so that a query with every key masked gives zeros. B=2, S=4, D=8, H=2, E=4.
std::string torch_sdpa(const std::string& guard_fill) {
  return fill(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,8] x, bool[2,1,4,4] keep) => (float[2,4,8] y)
       <float[8,8] wq = $WQ, float[8] bq = $BQ, float[8,8] wk = $WK, float[8] bk = $BK,
        float[8,8] wv = $WV, float[8] bv = $BV, int64[4] split = {2, 4, 2, 4},
        int64[3] merge = {2, 4, -1}, float s = {0.70710677}, float[1] zero = {0.0},
        float[1] fill = {$FILL}> {
      qm = MatMul(x, wq)
      q = Add(bq, qm)
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      km = MatMul(x, wk)
      k = Add(bk, km)
      kr = Reshape(k, split)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      vm = MatMul(x, wv)
      v = Add(bv, vm)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      q2 = Mul(qt, s)
      k2 = Mul(kt, s)
      sc = MatMul(q2, k2)
      ninf = Log(zero)
      m = Where(keep, zero, ninf)
      scm = Add(sc, m)
      p = Softmax <axis = -1> (scm)
      nan = IsNaN(p)
      pg = Where(nan, fill, p)
      o = MatMul(pg, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })",
              {{"FILL", guard_fill},
               {"WQ", values(64, 1)},
               {"BQ", values(8, 2)},
               {"WK", values(64, 3)},
               {"BK", values(8, 4)},
               {"WV", values(64, 5)},
               {"BV", values(8, 6)}});
}

TEST(FuseAttention, TorchSdpaExportWithNanGuard) {
  const std::string before = torch_sdpa("0.0");
  EXPECT_EQ(test::ops_after("fuse-attention", before),
            (std::vector<std::string>{"Log", "Where", "MatMul", "MatMul", "MatMul",
                                      "com.microsoft.MultiHeadAttention"}));
  test::expect_numerically_equal("fuse-attention", before);
  // Query 0 of batch 0 may look at no key: the guard's zeros, from the fused op too.
  ir::Model a = test::parse_text(before);
  ir::Model b = test::parse_text(before);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-attention").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(b, ctx).is_ok());
  auto inputs = test::random_inputs(a);
  ir::Tensor keep(ir::DType::kBool, {2, 1, 4, 4});
  for (int64_t i = 0; i < keep.numel(); ++i) keep.mutable_data<bool>()[i] = i >= 4 && i % 3 != 0;
  inputs["keep"] = keep;
  auto want = exec::run_model(a, inputs);
  auto got = exec::run_model(b, inputs);
  ASSERT_TRUE(want.is_ok() && got.is_ok());
  EXPECT_EQ(test::outputs_difference(*got, *want), "");
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ((*got)[0].data<float>()[i], 0.0f) << i;
}

// A guard that fills NaN rows with anything but zeros is not what the fused op does.
TEST(FuseAttention, NanGuardWithAnotherFillDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-attention", torch_sdpa("1.0"));
}

// The probabilities are a graph output too: the block cannot disappear.
TEST(FuseAttention, ProbabilitiesReadElsewhereDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-attention", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4,8] q, float[1,4,8] k, float[1,4,8] v) => (float[1,4,8] y, float[1,2,4,4] p)
       <int64[4] split = {1, 4, 2, 4}, int64[3] merge = {1, 4, 8}> {
      qr = Reshape(q, split)
      qt = Transpose <perm = [0, 2, 1, 3]> (qr)
      kr = Reshape(k, split)
      kt = Transpose <perm = [0, 2, 3, 1]> (kr)
      vr = Reshape(v, split)
      vt = Transpose <perm = [0, 2, 1, 3]> (vr)
      sc = MatMul(qt, kt)
      p = Softmax(sc)
      o = MatMul(p, vt)
      ot = Transpose <perm = [0, 2, 1, 3]> (o)
      y = Reshape(ot, merge)
    })");
}

}  // namespace
}  // namespace xopt
