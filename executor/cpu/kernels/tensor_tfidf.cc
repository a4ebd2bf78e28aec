// TfIdfVectorizer (ai.onnx 9): counts the pool's n-grams (of min_gram_length..max_gram_length
// items, with up to max_skip_count items skipped between consecutive ones) in each row of X
// (integers, or strings with pool_strings), weighted by mode TF / IDF / TFIDF. As onnxruntime and
// the ONNX reference count them: unigrams once per position, longer n-grams once per skip
// distance.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/kernels/ops_util.h"
#include "onnx/onnx_pb.h"

namespace xopt::exec::ops {
namespace {

template <typename K>
Status count_ngrams(KernelContext& ctx, const std::vector<K>& pool, const std::vector<K>& x,
                    int64_t rows, int64_t cols, std::vector<double>& freq, int64_t out_size) {
  const ir::Node& node = ctx.node();
  const int64_t min_n = node.attr_int("min_gram_length", 1);
  const int64_t max_n = node.attr_int("max_gram_length", 1);
  const int64_t max_skip = node.attr_int("max_skip_count", 0);
  const std::vector<int64_t> counts = node.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = node.attr_ints("ngram_indexes");
  if (min_n < 1 || max_n < min_n || max_skip < 0)
    return ctx.error("bad gram lengths or skip count");
  // n-gram -> output column.
  std::map<std::vector<K>, int64_t> grams;
  int64_t id = 0;
  const auto total = static_cast<int64_t>(pool.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : total;
    const auto size = static_cast<int64_t>(i + 1);
    if (begin < 0 || end > total || end < begin)
      return ctx.error("ngram_counts do not fit the pool");
    for (int64_t at = begin; at + size <= end; at += size, ++id) {
      if (size < min_n || size > max_n) continue;
      if (id >= static_cast<int64_t>(indexes.size()))
        return ctx.error("ngram_indexes is too short");
      grams[std::vector<K>(pool.begin() + at, pool.begin() + at + size)] =
          indexes[static_cast<size_t>(id)];
    }
  }
  std::vector<K> g;
  for (int64_t r = 0; r < rows; ++r) {
    const K* row = x.data() + r * cols;
    for (int64_t d = 1; d <= max_skip + 1; ++d) {
      const int64_t first = d == 1 ? min_n : std::max<int64_t>(min_n, 2);
      if (first > max_n) break;
      for (int64_t s = 0; s < cols; ++s)
        for (int64_t n = first; n <= max_n; ++n) {
          if (s + (n - 1) * d >= cols) break;
          g.clear();
          for (int64_t k = 0; k < n; ++k) g.push_back(row[s + k * d]);
          auto it = grams.find(g);
          if (it != grams.end()) freq[static_cast<size_t>(r * out_size + it->second)] += 1.0;
        }
    }
  }
  return Status::ok();
}

Status tfidf(KernelContext& ctx) {
  const ir::Tensor* x = ctx.input(0);
  if (x == nullptr) return ctx.error("X is required");
  if (x->rank() != 1 && x->rank() != 2) return ctx.error("X must be [C] or [N, C]");
  const ir::Node& node = ctx.node();
  const std::vector<int64_t> indexes = node.attr_ints("ngram_indexes");
  if (indexes.empty()) return ctx.error("ngram_indexes is required");
  const int64_t out_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  const int64_t rows = x->rank() == 2 ? x->dims()[0] : 1;
  const int64_t cols = x->dims().back();
  std::vector<double> freq(static_cast<size_t>(rows * out_size), 0.0);
  if (x->dtype() == ir::DType::kString) {
    const onnx::AttributeProto* a = node.attr("pool_strings");
    if (a == nullptr) return ctx.error("string input needs pool_strings");
    std::vector<std::string> pool(a->strings().begin(), a->strings().end());
    XOPT_RETURN_IF_ERROR(count_ngrams(ctx, pool, x->strings(), rows, cols, freq, out_size));
  } else {
    if (!node.has_attr("pool_int64s")) return ctx.error("integer input needs pool_int64s");
    XOPT_RETURN_IF_ERROR(count_ngrams(ctx, node.attr_ints("pool_int64s"), x->to_int64_vector(),
                                      rows, cols, freq, out_size));
  }
  const std::string mode = node.attr_string("mode", "");
  const std::vector<float> w = node.attr_floats("weights");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.error("unknown mode '" + mode + "'");
  if (!w.empty() && static_cast<int64_t>(w.size()) < out_size)
    return ctx.error("weights too short");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < out_size; ++i) {
      double& f = freq[static_cast<size_t>(r * out_size + i)];
      if (mode == "IDF") f = f > 0 ? (w.empty() ? 1.0 : w[static_cast<size_t>(i)]) : 0.0;
      if (mode == "TFIDF" && !w.empty()) f *= w[static_cast<size_t>(i)];
    }
  std::vector<int64_t> odims =
      x->rank() == 2 ? std::vector<int64_t>{rows, out_size} : std::vector<int64_t>{out_size};
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output_uninit(0, ir::DType::kFloat, odims));
  return store(freq, y);
}

}  // namespace

XOPT_CPU_KERNEL("", "TfIdfVectorizer", 9, kLatest, tfidf);

}  // namespace xopt::exec::ops
