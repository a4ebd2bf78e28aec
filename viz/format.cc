#include "viz/format.h"

#include <cstdio>

namespace xopt::viz {

std::string compact_bytes(size_t bytes) {
  const double b = static_cast<double>(bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return format("%zu B", bytes);
  double v = b / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return v < 10 ? format("%.1f %s", v, units[u]) : format("%.0f %s", v, units[u]);
}

std::string short_dtype(ir::DType t) {
  using ir::DType;
  switch (t) {
    case DType::kFloat:
      return "f32";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kDouble:
      return "f64";
    case DType::kInt8:
      return "i8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kUInt8:
      return "u8";
    case DType::kUInt16:
      return "u16";
    case DType::kUInt32:
      return "u32";
    case DType::kUInt64:
      return "u64";
    case DType::kBool:
      return "bool";
    case DType::kUndefined:
      return "";
    default:
      return std::string(ir::dtype_name(t));
  }
}

std::string shape_text(const ir::Shape& s) {
  if (!s.has_rank()) return "?";
  if (s.rank() == 0) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.rank(); ++i) {
    if (i) out += "x";
    const ir::Dim& d = s[i];
    out += d.is_known() ? std::to_string(d.value) : (d.is_symbolic() ? d.symbol : "?");
  }
  return out;
}

size_t value_bytes(const ir::Value& v) {
  auto n = v.shape().numel();
  if (!n) return 0;
  return static_cast<size_t>(*n) * ir::dtype_size(v.dtype());
}

std::string value_summary(const ir::Value& v) {
  std::string out = short_dtype(v.dtype());
  if (v.shape().has_rank()) out += (out.empty() ? "" : " ") + shape_text(v.shape());
  if (size_t b = value_bytes(v); b > 0) out += " \xC2\xB7 " + compact_bytes(b);
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace xopt::viz
