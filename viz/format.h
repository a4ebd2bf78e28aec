// Small text helpers shared by the drawings: compact byte counts, shapes, XML escaping.
#pragma once

#include <cstddef>
#include <string>

#include "common/format.h"
#include "ir/graph.h"

namespace xopt::viz {

// "3.1 MiB", "784 KiB", "96 B": short enough for a node card.
std::string compact_bytes(size_t bytes);
// "f32", "i64", "f16": the short dtype names of node cards.
std::string short_dtype(ir::DType t);
// "1x64x56x56", "batchx128", "?" for an unknown rank.
std::string shape_text(const ir::Shape& s);
// Exact bytes of a value when its shape is static (0 otherwise).
size_t value_bytes(const ir::Value& v);
// "f32 1x64x56x56 · 784 KiB" (the parts that are known).
std::string value_summary(const ir::Value& v);
// Escapes &, <, >, " and ' for XML text and attribute values.
std::string xml_escape(const std::string& s);
// printf into a std::string (common/format.h).
using ::xopt::format;

}  // namespace xopt::viz
