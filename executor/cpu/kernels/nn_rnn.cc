// Recurrent layers: RNN, GRU, LSTM, and onnxruntime's com.microsoft DynamicQuantizeLSTM (an LSTM
// whose W and R are 8-bit, stored transposed, with X and each hidden state quantized to uint8 on
// the fly the way onnxruntime does). Every attribute of the spec: forward, reverse and
// bidirectional; activations with their alpha/beta; clip; layout 0/1; sequence_lens; initial
// states; LSTM peepholes and input_forget; GRU linear_before_reset; the optional outputs.
//
// Each direction runs in its own time order: the reverse direction reads every batch entry's valid
// steps backwards (so a short sequence starts at its own last step, as in onnxruntime), and steps
// past a sequence's length leave its state alone and write zeros to Y.
#include <functional>
#include <string>
#include <vector>

#include "executor/cpu/gemm.h"
#include "executor/cpu/kernels/nn_util.h"
#include "executor/cpu/kernels/quant_util.h"

namespace xopt::exec::nn {
namespace {

// One activation of the recurrent ops (the spec's list, case-insensitive as in onnxruntime).
struct RnnActivation {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  } kind = kTanh;
  float alpha = 0, beta = 0;

  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    switch (kind) {
      case kRelu:
        return x > C(0) ? x : C(0);
      case kTanh:
        return std::tanh(x);
      case kSigmoid:
        return C(1) / (C(1) + std::exp(-x));
      case kAffine:
        return a * x + b;
      case kLeakyRelu:
        return x >= C(0) ? x : a * x;
      case kThresholdedRelu:
        return x > a ? x : C(0);
      case kScaledTanh:
        return a * std::tanh(b * x);
      case kHardSigmoid:
        return std::max(C(0), std::min(C(1), a * x + b));
      case kElu:
        return x >= C(0) ? x : a * (std::exp(x) - C(1));
      case kSoftsign:
        return x / (C(1) + std::abs(x));
      case kSoftplus:
        return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The activations of every direction (per_dir of them each, defaults `defaults`). The attribute
// lists either all directions' functions or one direction's, then shared with the same alpha/beta
// (onnxruntime refuses the short list for a bidirectional RNN; the spec does not say).
// activation_alpha and activation_beta are consumed in order by the functions that take them
// (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu), each falling back to its ONNX
// operator's default when the list runs out, as onnxruntime reads them.
Result<std::vector<RnnActivation>> read_activations(const KernelContext& ctx,
                                                    const std::vector<std::string>& defaults,
                                                    int64_t dirs) {
  const ir::Node& node = ctx.node();
  std::vector<std::string> names;
  if (const onnx::AttributeProto* a = node.attr("activations"))
    names.assign(a->strings().begin(), a->strings().end());
  const size_t per_dir = defaults.size();
  if (names.empty()) names = defaults;
  // One direction's list for both directions: parsed once, then repeated with its alpha/beta.
  const bool shared = names.size() == per_dir;
  if (names.size() != per_dir && names.size() != per_dir * static_cast<size_t>(dirs))
    return ctx.error("activations has " + std::to_string(names.size()) + " functions, expected " +
                     std::to_string(per_dir * static_cast<size_t>(dirs)));
  const std::vector<float> alphas = node.attr_floats("activation_alpha");
  const std::vector<float> betas = node.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<RnnActivation> out;
  for (const std::string& name : names) {
    struct Entry {
      const char* name;
      RnnActivation::Kind kind;
      int uses;  // 0 none, 1 alpha, 2 alpha and beta
      float alpha, beta;
    };
    static const Entry kTable[] = {
        {"relu", RnnActivation::kRelu, 0, 0, 0},
        {"tanh", RnnActivation::kTanh, 0, 0, 0},
        {"sigmoid", RnnActivation::kSigmoid, 0, 0, 0},
        {"affine", RnnActivation::kAffine, 2, 0, 0},
        {"leakyrelu", RnnActivation::kLeakyRelu, 1, 0.01f, 0},
        {"thresholdedrelu", RnnActivation::kThresholdedRelu, 1, 0, 0},
        {"scaledtanh", RnnActivation::kScaledTanh, 2, 0, 0},
        {"hardsigmoid", RnnActivation::kHardSigmoid, 2, 0.2f, 0.5f},
        {"elu", RnnActivation::kElu, 1, 1.0f, 0},
        {"softsign", RnnActivation::kSoftsign, 0, 0, 0},
        {"softplus", RnnActivation::kSoftplus, 0, 0, 0},
    };
    const std::string key = lower(name);
    const Entry* e = nullptr;
    for (const Entry& t : kTable)
      if (key == t.name) e = &t;
    if (e == nullptr) return ctx.unsupported("activation '" + name + "'");
    RnnActivation a;
    a.kind = e->kind;
    a.alpha = e->alpha;
    a.beta = e->beta;
    if (e->uses >= 1 && ai < alphas.size()) a.alpha = alphas[ai++];
    if (e->uses >= 2 && bi < betas.size()) a.beta = betas[bi++];
    out.push_back(a);
  }
  if (shared && dirs == 2) {
    const std::vector<RnnActivation> one = out;
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

// out[m, col0 .. col0 + ncols) (row stride ldo) = a [m, k] times the transpose of the weights'
// rows col0 .. col0 + ncols, added to out when `accumulate`.
template <typename C>
using Projection = std::function<void(const C* a, int64_t m, int64_t col0, int64_t ncols, C* out,
                                      int64_t ldo, bool accumulate)>;

// A float weight [rows, k] (row-major), one direction's slice of W or R.
template <typename C>
Projection<C> float_projection(const C* w, int64_t k) {
  return [w, k](const C* a, int64_t m, int64_t col0, int64_t ncols, C* out, int64_t ldo,
                bool accumulate) {
    gemm<C>(false, true, m, ncols, k, 1.0, a, k, w + col0 * k, k, accumulate ? 1.0 : 0.0, out, ldo);
  };
}

// A quantized weight as DynamicQuantizeLSTM stores it: [k, cols] (already transposed), minus its
// zero point, with a scale per column. `a` is quantized to uint8 (over all its m * k elements, or
// row by row with `per_row`), the integer product taken exactly, then scaled in float:
// onnxruntime's quantized GEMM, which quantizes the whole input sequence at once and each
// hidden-state row alone.
Projection<float> quantized_projection(std::vector<double> w, std::vector<float> scales, int64_t k,
                                       int64_t cols, bool per_row) {
  return [w = std::move(w), scales = std::move(scales), k, cols, per_row](
             const float* a, int64_t m, int64_t col0, int64_t ncols, float* out, int64_t ldo,
             bool accumulate) {
    const int64_t rows_per_block = per_row ? 1 : m;
    std::vector<double> ad(static_cast<size_t>(rows_per_block * k));
    std::vector<double> acc(static_cast<size_t>(rows_per_block * ncols));
    std::vector<uint8_t> aq(ad.size());
    for (int64_t r0 = 0; r0 < m; r0 += rows_per_block) {
      const float* ab = a + r0 * k;
      const quant::DynamicParams p = quant::dynamic_uint8_params(ab, rows_per_block * k);
      quant::quantize_uint8(ab, rows_per_block * k, p, aq.data());
      for (size_t i = 0; i < aq.size(); ++i) ad[i] = double(aq[i]) - double(p.zero_point);
      gemm<double>(false, false, rows_per_block, ncols, k, 1.0, ad.data(), k, w.data() + col0, cols,
                   0.0, acc.data(), ncols);
      for (int64_t r = 0; r < rows_per_block; ++r)
        for (int64_t c = 0; c < ncols; ++c) {
          const float v = static_cast<float>(acc[static_cast<size_t>(r * ncols + c)]) *
                          (p.scale * scales[static_cast<size_t>(col0 + c)]);
          float& o = out[(r0 + r) * ldo + c];
          o = accumulate ? o + v : v;
        }
    }
  };
}

enum class Cell { kRnn, kGru, kLstm };

int64_t gates_of(Cell cell) {
  return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
}

// Everything one direction needs, in compute type C. Biases, peepholes and initial states may be
// empty (zero).
template <typename C>
struct DirectionInput {
  Projection<C> w, r;
  const C* wb = nullptr;               // [gates * H]
  const C* rb = nullptr;               // [gates * H]
  const C* p = nullptr;                // LSTM peepholes [3 * H]: i, o, f
  const C* h0 = nullptr;               // [batch, H]
  const C* c0 = nullptr;               // [batch, H]
  const RnnActivation* act = nullptr;  // f (, g (, h))
  bool reverse = false;
};

struct Config {
  Cell cell;
  int64_t seq, batch, input, hidden;
  std::vector<int64_t> lens;  // per batch entry
  float clip = 0;             // 0: none
  bool linear_before_reset = false, input_forget = false;
};

// Runs one direction over x ([seq, batch, input]): y ([seq, batch, H], in x's time order) and the
// last h and c ([batch, H]).
template <typename C>
void run_direction(const Config& cf, const DirectionInput<C>& in, const C* x, C* y, C* h_last,
                   C* c_last) {
  const int64_t B = cf.batch, H = cf.hidden, G = gates_of(cf.cell), GH = G * H;
  // Time step of processing step s for batch entry b.
  auto time_of = [&](int64_t s, int64_t b) { return in.reverse ? cf.lens[b] - 1 - s : s; };
  int64_t max_len = 0;
  for (int64_t l : cf.lens) max_len = std::max(max_len, l);
  // x in processing order (zeros past each sequence's end), then its projection for all steps.
  std::vector<C> xo(static_cast<size_t>(cf.seq * B * cf.input), C(0));
  for (int64_t s = 0; s < max_len; ++s)
    for (int64_t b = 0; b < B; ++b)
      if (s < cf.lens[b])
        std::copy_n(x + (time_of(s, b) * B + b) * cf.input, cf.input,
                    xo.data() + (s * B + b) * cf.input);
  std::vector<C> xw(static_cast<size_t>(cf.seq * B * GH));
  if (cf.seq * B > 0) in.w(xo.data(), cf.seq * B, 0, GH, xw.data(), GH, false);

  std::vector<C> h(static_cast<size_t>(B * H), C(0)), c(h.size(), C(0)), hr(h.size());
  if (in.h0 != nullptr) std::copy_n(in.h0, B * H, h.begin());
  if (in.c0 != nullptr) std::copy_n(in.c0, B * H, c.begin());
  std::vector<C> rh(h.size());  // GRU: r (.) h
  auto bias = [&](const C* v, int64_t i) { return v != nullptr ? v[i] : C(0); };
  auto clip = [&](C v) { return cf.clip > 0 ? std::min(std::max(v, C(-cf.clip)), C(cf.clip)) : v; };
  const RnnActivation& f = in.act[0];
  const RnnActivation& g = in.act[cf.cell == Cell::kRnn ? 0 : 1];
  const RnnActivation& hact = in.act[cf.cell == Cell::kLstm ? 2 : 0];
  std::fill(y, y + cf.seq * B * H, C(0));
  for (int64_t s = 0; s < max_len; ++s) {
    C* gs = xw.data() + s * B * GH;
    if (cf.cell == Cell::kGru) {
      in.r(h.data(), B, 0, 2 * H, gs, GH, true);  // z and r
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < 2 * H; ++j) {
          C& v = gs[b * GH + j];
          v = f(clip(v + bias(in.wb, j) + bias(in.rb, j)));
        }
      if (cf.linear_before_reset) {
        in.r(h.data(), B, 2 * H, H, hr.data(), H, false);
      } else {
        for (int64_t i = 0; i < B * H; ++i) rh[i] = gs[(i / H) * GH + H + i % H] * h[i];
        in.r(rh.data(), B, 2 * H, H, hr.data(), H, false);
      }
    } else {
      in.r(h.data(), B, 0, GH, gs, GH, true);
    }
    for (int64_t b = 0; b < B; ++b) {
      if (s >= cf.lens[b]) continue;
      const C* gb = gs + b * GH;
      C* hb = h.data() + b * H;
      C* cb = c.data() + b * H;
      C* yb = y + (time_of(s, b) * B + b) * H;
      for (int64_t j = 0; j < H; ++j) {
        auto pre = [&](int64_t gate) {
          return gb[gate * H + j] + bias(in.wb, gate * H + j) + bias(in.rb, gate * H + j);
        };
        if (cf.cell == Cell::kRnn) {
          hb[j] = f(clip(pre(0)));
        } else if (cf.cell == Cell::kGru) {
          const C z = gb[j], r = gb[H + j], hp = hb[j];
          const C lin = cf.linear_before_reset ? gb[2 * H + j] + bias(in.wb, 2 * H + j) +
                                                     r * (hr[b * H + j] + bias(in.rb, 2 * H + j))
                                               : gb[2 * H + j] + bias(in.wb, 2 * H + j) +
                                                     hr[b * H + j] + bias(in.rb, 2 * H + j);
          const C ht = g(clip(lin));
          hb[j] = (C(1) - z) * ht + z * hp;
        } else {  // LSTM, gates i, o, f, c
          const C cp = cb[j];
          const C pi = in.p != nullptr ? in.p[j] * cp : C(0);
          const C pf = in.p != nullptr ? in.p[2 * H + j] * cp : C(0);
          const C i = f(clip(pre(0) + pi));
          const C fg = cf.input_forget ? C(1) - i : f(clip(pre(2) + pf));
          const C cc = g(clip(pre(3)));
          const C cn = fg * cp + i * cc;
          const C po = in.p != nullptr ? in.p[H + j] * cn : C(0);
          const C o = f(clip(pre(1) + po));
          cb[j] = cn;
          hb[j] = o * hact(cn);
        }
        yb[j] = hb[j];
      }
    }
  }
  std::copy(h.begin(), h.end(), h_last);
  std::copy(c.begin(), c.end(), c_last);
}

// The elements of a float tensor in compute type C (empty for an absent tensor).
template <typename C>
std::vector<C> to_compute_vector(const ir::Tensor* t) {
  std::vector<C> v;
  if (t == nullptr) return v;
  v.resize(static_cast<size_t>(t->numel()));
  (void)dispatch_float(t->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = t->data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<C>(to_compute(p[i]));
    return Status::ok();
  });
  return v;
}

// A tensor's dims against an expected shape, for the error message.
Status check_dims(const KernelContext& ctx, const ir::Tensor* t, const std::vector<int64_t>& want,
                  const char* what) {
  if (t == nullptr || t->dims() == want) return Status::ok();
  return ctx.error(std::string(what) + " is " + ir::dims_string(t->dims()) + ", expected " +
                   ir::dims_string(want));
}

// The shared body of RNN, GRU, LSTM and DynamicQuantizeLSTM.
Status run_recurrent(KernelContext& ctx, Cell cell, bool quantized) {
  XOPT_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 2}));
  if (quantized) XOPT_RETURN_IF_ERROR(require_inputs(ctx, {8, 9, 10, 11}));
  const ir::Node& node = ctx.node();
  const ir::Tensor& x = *ctx.input(0);
  const ir::Tensor& w = *ctx.input(1);
  const ir::Tensor& r = *ctx.input(2);
  const std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error("direction '" + direction + "' is not forward, reverse or bidirectional");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = quantized || ctx.opset() < 14 ? 0 : node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return ctx.error("layout must be 0 or 1");
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3)
    return ctx.error("X, W and R must have rank 3, got " + ir::dims_string(x.dims()) + ", " +
                     ir::dims_string(w.dims()) + " and " + ir::dims_string(r.dims()));
  Config cf;
  cf.cell = cell;
  const int64_t G = gates_of(cell);
  cf.seq = x.dims()[layout == 0 ? 0 : 1];
  cf.batch = x.dims()[layout == 0 ? 1 : 0];
  cf.input = x.dims()[2];
  cf.hidden = node.attr_int("hidden_size", quantized ? r.dims()[1] : r.dims()[2]);
  const int64_t H = cf.hidden, B = cf.batch;
  if (H <= 0) return ctx.error("hidden_size must be positive");
  cf.clip = node.attr_float("clip", 0.0f);
  if (node.has_attr("clip") && cf.clip <= 0) return ctx.error("clip must be positive");
  cf.linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  cf.input_forget = node.attr_int("input_forget", 0) != 0;
  const std::vector<int64_t> w_dims = quantized ? std::vector<int64_t>{dirs, cf.input, G * H}
                                                : std::vector<int64_t>{dirs, G * H, cf.input};
  const std::vector<int64_t> r_dims =
      quantized ? std::vector<int64_t>{dirs, H, G * H} : std::vector<int64_t>{dirs, G * H, H};
  XOPT_RETURN_IF_ERROR(check_dims(ctx, &w, w_dims, "W"));
  XOPT_RETURN_IF_ERROR(check_dims(ctx, &r, r_dims, "R"));
  XOPT_RETURN_IF_ERROR(check_dims(ctx, ctx.input(3), {dirs, 2 * G * H}, "B"));
  const std::vector<int64_t> state_dims =
      layout == 0 ? std::vector<int64_t>{dirs, B, H} : std::vector<int64_t>{B, dirs, H};
  XOPT_RETURN_IF_ERROR(check_dims(ctx, ctx.input(5), state_dims, "initial_h"));
  if (cell == Cell::kLstm) {
    XOPT_RETURN_IF_ERROR(check_dims(ctx, ctx.input(6), state_dims, "initial_c"));
    XOPT_RETURN_IF_ERROR(check_dims(ctx, ctx.input(7), {dirs, 3 * H}, "P"));
  }
  cf.lens.assign(static_cast<size_t>(B), cf.seq);
  if (const ir::Tensor* sl = ctx.input(4)) {
    if (sl->numel() != B)
      return ctx.error("sequence_lens has " + std::to_string(sl->numel()) + " elements, expected " +
                       std::to_string(B));
    for (int64_t b = 0; b < B; ++b) {
      cf.lens[b] = sl->as_int64(b);
      if (cf.lens[b] < 0 || cf.lens[b] > cf.seq)
        return ctx.error("sequence_lens[" + std::to_string(b) +
                         "] = " + std::to_string(cf.lens[b]) + " is outside [0, " +
                         std::to_string(cf.seq) + "]");
    }
  }
  const std::vector<std::string> defaults =
      cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  XOPT_ASSIGN_OR_RETURN(std::vector<RnnActivation> acts, read_activations(ctx, defaults, dirs));
  for (size_t i : {3, 5, 6, 7})
    if (ctx.input(i) != nullptr && ctx.input(i)->dtype() != x.dtype() &&
        !(i == 6 && cell != Cell::kLstm))
      return ctx.error("input " + std::to_string(i) + " has element type " +
                       std::string(ir::dtype_name(ctx.input(i)->dtype())) + ", X has " +
                       std::string(ir::dtype_name(x.dtype())));
  if (quantized && x.dtype() != ir::DType::kFloat) return ctx.error("X must be float");
  if (!quantized && (w.dtype() != x.dtype() || r.dtype() != x.dtype()))
    return ctx.error("W and R must have X's element type");

  std::vector<int64_t> y_dims = layout == 0 ? std::vector<int64_t>{cf.seq, dirs, B, H}
                                            : std::vector<int64_t>{B, cf.seq, dirs, H};
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, x.dtype(), y_dims));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y_h, ctx.output_uninit(1, x.dtype(), state_dims));
  ir::Tensor* y_c = nullptr;
  if (cell == Cell::kLstm) {
    XOPT_ASSIGN_OR_RETURN(y_c, ctx.output_uninit(2, x.dtype(), state_dims));
  }

  return dispatch_float(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // X as [seq, batch, input]; states as [dirs, batch, H].
    std::vector<C> xs = to_compute_vector<C>(&x);
    auto swap01 = [](const std::vector<C>& v, int64_t d0, int64_t d1, int64_t inner) {
      std::vector<C> out(v.size());
      for (int64_t a = 0; a < d0; ++a)
        for (int64_t b = 0; b < d1; ++b)
          std::copy_n(v.data() + (a * d1 + b) * inner, inner, out.data() + (b * d0 + a) * inner);
      return out;
    };
    if (layout == 1) xs = swap01(xs, B, cf.seq, cf.input);
    auto state = [&](size_t i) {
      std::vector<C> v = to_compute_vector<C>(ctx.input(i));
      return layout == 1 && !v.empty() ? swap01(v, B, dirs, H) : v;
    };
    const std::vector<C> h0 = state(5);
    const std::vector<C> c0 = cell == Cell::kLstm ? state(6) : std::vector<C>();
    const std::vector<C> bias = to_compute_vector<C>(ctx.input(3));
    const std::vector<C> peep =
        cell == Cell::kLstm ? to_compute_vector<C>(ctx.input(7)) : std::vector<C>();
    std::vector<C> wv, rv;
    if (!quantized) {
      wv = to_compute_vector<C>(&w);
      rv = to_compute_vector<C>(&r);
    }
    std::vector<C> ys(static_cast<size_t>(dirs * cf.seq * B * H));
    std::vector<C> hl(static_cast<size_t>(dirs * B * H)), cl(hl.size());
    for (int64_t d = 0; d < dirs; ++d) {
      DirectionInput<C> in;
      if constexpr (std::is_same_v<C, float>) {
        if (quantized) {
          auto weights = [&](size_t wi, size_t si, size_t zi, int64_t k, bool per_row,
                             Status* st) -> Projection<float> {
            const ir::Tensor &q = *ctx.input(wi), &sc = *ctx.input(si), &zp = *ctx.input(zi);
            const int64_t cols = G * H;
            if ((sc.numel() != dirs && sc.numel() != dirs * cols) || zp.numel() != sc.numel()) {
              *st = ctx.error(
                  "W/R scales and zero points must have one value per direction or "
                  "per direction and column");
              return {};
            }
            const bool per_col = sc.numel() == dirs * cols;
            std::vector<double> wd(static_cast<size_t>(k * cols));
            std::vector<float> scales(static_cast<size_t>(cols));
            Status s = quant::dispatch_quantized(ctx, q.dtype(), [&](auto qt) -> Status {
              using Q = typename decltype(qt)::type;
              const Q* qd = q.data<Q>() + d * k * cols;
              for (int64_t i = 0; i < k * cols; ++i) {
                const int64_t col = i % cols, si2 = per_col ? d * cols + col : d;
                wd[static_cast<size_t>(i)] = double(qd[i]) - zp.as_double(si2);
              }
              for (int64_t col = 0; col < cols; ++col)
                scales[static_cast<size_t>(col)] =
                    static_cast<float>(sc.as_double(per_col ? d * cols + col : d));
              return Status::ok();
            });
            if (!s) {
              *st = s;
              return {};
            }
            return quantized_projection(std::move(wd), std::move(scales), k, cols, per_row);
          };
          Status st = Status::ok();
          in.w = weights(1, 8, 9, cf.input, false, &st);
          XOPT_RETURN_IF_ERROR(st);
          in.r = weights(2, 10, 11, H, true, &st);
          XOPT_RETURN_IF_ERROR(st);
        }
      }
      if (!quantized) {
        in.w = float_projection<C>(wv.data() + d * G * H * cf.input, cf.input);
        in.r = float_projection<C>(rv.data() + d * G * H * H, H);
      }
      if (!bias.empty()) {
        in.wb = bias.data() + d * 2 * G * H;
        in.rb = in.wb + G * H;
      }
      if (!peep.empty()) in.p = peep.data() + d * 3 * H;
      if (!h0.empty()) in.h0 = h0.data() + d * B * H;
      if (!c0.empty()) in.c0 = c0.data() + d * B * H;
      in.act = acts.data() + d * static_cast<int64_t>(defaults.size());
      in.reverse = direction == "reverse" || d == 1;
      run_direction<C>(cf, in, xs.data(), ys.data() + d * cf.seq * B * H, hl.data() + d * B * H,
                       cl.data() + d * B * H);
    }
    // Y: [seq, dirs, batch, H] (layout 0) or [batch, seq, dirs, H] (layout 1).
    T* yd = y->mutable_data<T>();
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t t = 0; t < cf.seq; ++t)
        for (int64_t b = 0; b < B; ++b) {
          const C* src = ys.data() + ((d * cf.seq + t) * B + b) * H;
          T* dst =
              yd + (layout == 0 ? ((t * dirs + d) * B + b) * H : ((b * cf.seq + t) * dirs + d) * H);
          for (int64_t j = 0; j < H; ++j) dst[j] = from_compute<T>(src[j]);
        }
    auto store_state = [&](const std::vector<C>& v, ir::Tensor* out) {
      T* o = out->mutable_data<T>();
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j)
            o[(layout == 0 ? d * B + b : b * dirs + d) * H + j] =
                from_compute<T>(v[static_cast<size_t>((d * B + b) * H + j)]);
    };
    store_state(hl, y_h);
    if (y_c != nullptr) store_state(cl, y_c);
    return Status::ok();
  });
}

Status rnn(KernelContext& ctx) {
  return run_recurrent(ctx, Cell::kRnn, false);
}
Status gru(KernelContext& ctx) {
  return run_recurrent(ctx, Cell::kGru, false);
}
Status lstm(KernelContext& ctx) {
  return run_recurrent(ctx, Cell::kLstm, false);
}
Status dynamic_quantize_lstm(KernelContext& ctx) {
  return run_recurrent(ctx, Cell::kLstm, true);
}

}  // namespace

XOPT_CPU_KERNEL("", "RNN", 1, kLatestOpset, rnn);
XOPT_CPU_KERNEL("", "GRU", 1, kLatestOpset, gru);
XOPT_CPU_KERNEL("", "LSTM", 1, kLatestOpset, lstm);
XOPT_CPU_KERNEL("com.microsoft", "DynamicQuantizeLSTM", 1, 1, dynamic_quantize_lstm);

}  // namespace xopt::exec::nn
