#include "ir/onnx_io.h"
#include "ir/provenance.h"

#include "ir/subgraph.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/atomic_file.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "ir/tensor_proto.h"
#include "ir/value_type.h"

namespace xopt::ir {

namespace fs = std::filesystem;

namespace {

constexpr size_t kTwoGiB = size_t{2} << 30;

// Reads a declared type into `v` (tensor: dtype and shape; anything else kept whole).
void parse_type(const onnx::TypeProto& t, Value* v) {
  v->set_type(t);
}

// The same declared shape: Shape's == never equates two unknown dims (they may differ at run
// time), but an unknown dim written as "?" or -1 says the same as an unknown dim.
bool same_declared_shape(const Shape& a, const Shape& b) {
  if (a.has_rank() != b.has_rank() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i) {
    const bool both_unknown =
        !a[i].is_known() && !a[i].is_symbolic() && !b[i].is_known() && !b[i].is_symbolic();
    if (!both_unknown && !(a[i] == b[i])) return false;
  }
  return true;
}

// Writes `v`'s current dtype/shape into `info` unless `info` already says the same.
void sync_type(const Value* v, onnx::ValueInfoProto& info) {
  info.set_name(v->name());
  if (!v->is_tensor()) {
    if (!same_type(info.type(), v->type())) *info.mutable_type() = v->type();
    return;
  }
  DType d;
  Shape s;
  parse_tensor_type(info.type(), &d, &s);
  const bool is_tensor = type_kind(info.type()) == TypeKind::kTensor;
  if (is_tensor && d == v->dtype() && same_declared_shape(s, v->shape())) return;
  if (v->dtype() == DType::kUndefined && !v->shape().has_rank()) return;
  auto* tt = info.mutable_type()->mutable_tensor_type();
  if (v->dtype() != DType::kUndefined) tt->set_elem_type(static_cast<int32_t>(v->dtype()));
  if (v->shape().has_rank()) {
    auto* sp = tt->mutable_shape();
    sp->clear_dim();
    for (const auto& dim : v->shape().dims()) {
      auto* pd = sp->add_dim();
      if (dim.is_known())
        pd->set_dim_value(dim.value);
      else if (!dim.symbol.empty())
        pd->set_dim_param(dim.symbol);
    }
  } else {
    tt->clear_shape();
  }
}

}  // namespace

// Builds Graph internals from protos; a friend of Graph/Node/Value.
class ModelIO {
 public:
  static Result<Model> from_proto(onnx::ModelProto proto, const std::string& base_dir,
                                  const std::string& path);
  // `put` fills one initializer's TensorProto; when null, initializers are left out (the caller
  // streams them after the graph, see write_streamed).
  static onnx::ModelProto to_proto(
      const Model& model, bool inferred_value_info,
      const std::function<void(const Value*, onnx::TensorProto&)>& put);
};

Result<Model> ModelIO::from_proto(onnx::ModelProto proto, const std::string& base_dir,
                                  const std::string& path) {
  Model model;
  model.base_dir = base_dir;
  model.path = path;
  Graph& g = *model.graph;
  onnx::GraphProto* gp = proto.mutable_graph();

  for (const auto& op : proto.opset_import()) g.opsets_.emplace_back(op.domain(), op.version());

  for (const auto& vi : gp->input()) {
    if (vi.name().empty()) return invalid_model("a graph input has no name");
    Value* v = g.get_or_create_value(vi.name());
    if (v->is_graph_input_) return invalid_model("graph input '" + vi.name() + "' is listed twice");
    v->kind_ = ValueKind::kInput;
    v->is_graph_input_ = true;
    v->input_info_ = vi;
    parse_type(vi.type(), v);
    g.inputs_.push_back(v);
  }

  for (auto& tp : *gp->mutable_initializer()) {
    if (tp.name().empty()) return invalid_model("an initializer has no name");
    Value* v = g.get_or_create_value(tp.name());
    if (v->initializer_ != nullptr)
      return invalid_model("initializer '" + tp.name() + "' is defined twice");
    TensorEncoding enc = TensorEncoding::kRaw;
    std::string name = tp.name();
    onnx::TensorProto shell;
    shell.set_name(name);
    if (tp.has_doc_string()) shell.set_doc_string(tp.doc_string());
    if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
      shell.set_data_location(onnx::TensorProto::EXTERNAL);
      *shell.mutable_external_data() = tp.external_data();
    }
    shell.GetReflection()->MutableUnknownFields(&shell)->MergeFrom(
        tp.GetReflection()->GetUnknownFields(tp));
    auto t = tensor_from_proto(std::move(tp), base_dir, &enc);
    if (!t.is_ok()) return t.status().with_context("initializer '" + name + "': ");
    v->kind_ = ValueKind::kInitializer;
    v->dtype_ = t->dtype();
    v->shape_ = t->shape();
    v->initializer_ = std::make_shared<Tensor>(std::move(t).value());
    v->initializer_shell_ = std::move(shell);
    v->initializer_encoding_ = enc;
    g.initializer_order_.push_back(v);
  }
  gp->clear_initializer();

  for (auto& sp : *gp->mutable_sparse_initializer()) {
    const std::string& name = sp.values().name();
    if (name.empty()) return invalid_model("a sparse initializer has no name");
    Value* v = g.get_or_create_value(name);
    if (v->initializer_ != nullptr || v->sparse_ != nullptr)
      return invalid_model("initializer '" + name + "' is defined twice");
    v->kind_ = ValueKind::kSparseInitializer;
    v->dtype_ = static_cast<DType>(sp.values().data_type());
    v->shape_ = Shape::of({sp.dims().begin(), sp.dims().end()});
    v->sparse_ = std::make_unique<onnx::SparseTensorProto>(std::move(sp));
    g.sparse_order_.push_back(v);
  }
  gp->clear_sparse_initializer();

  for (auto& np : *gp->mutable_node()) {
    std::unique_ptr<Node> owned(
        new Node(&g, np.op_type(), np.domain() == "ai.onnx" ? "" : np.domain()));
    Node* n = owned.get();
    n->self_ = g.nodes_.insert(g.nodes_.end(), std::move(owned));
    n->name_ = np.name();
    for (const auto& in : np.input())
      n->add_input(in.empty() ? nullptr : g.get_or_create_value(in));
    for (int i = 0; i < np.output_size(); ++i) {
      const std::string& out = np.output(i);
      if (out.empty()) {
        n->outputs_.push_back(nullptr);
        continue;
      }
      Value* v = g.get_or_create_value(out);
      if (v->producer_ != nullptr) {
        return invalid_model("value '" + out + "' is written by two nodes: " +
                             v->producer_->describe() + " and " + n->describe());
      }
      if (v->initializer_ != nullptr || v->is_graph_input_) {
        return invalid_model(n->describe() + " writes '" + out +
                             "', which is already a graph input or initializer");
      }
      v->kind_ = ValueKind::kActivation;
      v->producer_ = n;
      v->producer_index_ = i;
      n->outputs_.push_back(v);
    }
    for (auto& a : *np.mutable_attribute()) n->attrs_.push_back(std::move(a));
    np.clear_input();
    np.clear_output();
    np.clear_attribute();
    n->shell_.MergeFrom(np);  // keeps name/op_type/domain so their explicit presence round-trips
  }
  gp->clear_node();

  // Outer-scope references from subgraphs become implicit inputs.
  for (const auto& owned : g.nodes_) {
    Node* n = owned.get();
    std::vector<std::string> refs;
    std::set<std::string> seen;
    for (const auto& a : n->attrs_) {
      if (a.has_g()) collect_outer_reads(a.g(), {}, refs, seen);
      for (const auto& sg : a.graphs()) collect_outer_reads(sg, {}, refs, seen);
    }
    for (const auto& r : refs) {
      Value* v = g.get_or_create_value(r);
      n->implicit_inputs_.push_back(v);
      v->uses_.push_back({n, -static_cast<int>(n->implicit_inputs_.size())});
    }
  }

  for (const auto& vi : gp->value_info()) {
    Value* v = g.get_or_create_value(vi.name());
    if (v->has_value_info_) continue;
    v->info_ = vi;
    v->has_value_info_ = true;
    if (v->dtype_ == DType::kUndefined && !v->shape_.has_rank()) parse_type(vi.type(), v);
    g.value_info_.push_back(v);
  }
  gp->clear_value_info();

  for (const auto& vi : gp->output()) {
    Value* v = g.get_or_create_value(vi.name());
    v->output_info_ = vi;
    v->is_graph_output_ = true;
    if (v->dtype_ == DType::kUndefined && !v->shape_.has_rank()) parse_type(vi.type(), v);
    g.outputs_.push_back(v);
  }
  gp->clear_output();
  gp->clear_input();

  g.shell_ = std::move(*gp);
  proto.clear_graph();  // opset_import stays in the shell; graph's copy is authoritative
  model.shell = std::move(proto);
  // The provenance an optimized model was saved with (ir/provenance.h) goes back on its nodes, so
  // a diff, a report and an error message name the originals as right after the passes.
  XOPT_ASSIGN_OR_RETURN(const ProvenanceMap provenance, read_provenance(model));
  for (const auto& [name, originals] : provenance)
    if (Node* n = g.find_node(name)) n->provenance_ = originals;
  return model;
}

onnx::ModelProto ModelIO::to_proto(
    const Model& model, bool inferred_value_info,
    const std::function<void(const Value*, onnx::TensorProto&)>& put) {
  const Graph& g = *model.graph;
  onnx::ModelProto proto = model.shell;
  bool same_opsets = proto.opset_import_size() == static_cast<int>(g.opsets_.size());
  for (size_t i = 0; same_opsets && i < g.opsets_.size(); ++i) {
    const auto& op = proto.opset_import(static_cast<int>(i));
    same_opsets = op.domain() == g.opsets_[i].first && op.version() == g.opsets_[i].second;
  }
  if (!same_opsets) {
    proto.clear_opset_import();
    for (const auto& [dom, ver] : g.opsets_) {
      auto* op = proto.add_opset_import();
      op->set_domain(dom);
      op->set_version(ver);
    }
  }
  onnx::GraphProto* gp = proto.mutable_graph();
  *gp = g.shell_;
  for (const Value* v : g.inputs_) {
    auto* vi = gp->add_input();
    *vi = v->input_info_;
    sync_type(v, *vi);
  }
  for (const Value* v : g.initializer_order_) {
    if (v->initializer_ == nullptr || !put) continue;
    auto* tp = gp->add_initializer();
    put(v, *tp);
  }
  for (const Value* v : g.sparse_order_)
    if (v->sparse_) *gp->add_sparse_initializer() = *v->sparse_;
  for (const auto& owned : g.nodes_) {
    const Node* n = owned.get();
    auto* np = gp->add_node();
    *np = n->shell_;
    for (const Value* in : n->inputs_) np->add_input(in ? in->name_ : std::string());
    for (const Value* out : n->outputs_) np->add_output(out ? out->name_ : std::string());
    if (np->name() != n->name_) np->set_name(n->name_);
    if (np->op_type() != n->op_type_) np->set_op_type(n->op_type_);
    const bool same_domain =
        np->domain() == n->domain_ || (n->domain_.empty() && np->domain() == "ai.onnx");
    if (!same_domain) np->set_domain(n->domain_);
    for (const auto& a : n->attrs_) *np->add_attribute() = a;
    // Field order in the proto is fixed by the schema, so setting name after inputs is harmless.
  }
  std::unordered_set<const Value*> described;
  for (const Value* v : g.value_info_) {
    auto* vi = gp->add_value_info();
    *vi = v->info_;
    sync_type(v, *vi);
    described.insert(v);
  }
  if (inferred_value_info) {
    for (const auto& owned : g.nodes_)
      for (const Value* v : owned->outputs_) {
        if (v == nullptr || v->is_graph_output_ || described.count(v) ||
            (v->is_tensor_ ? v->dtype_ == DType::kUndefined
                           : !v->type_.has_sequence_type() && !v->type_.has_optional_type()))
          continue;
        auto* vi = gp->add_value_info();
        sync_type(v, *vi);
      }
  }
  for (const Value* v : g.outputs_) {
    auto* vi = gp->add_output();
    *vi = v->output_info_;
    sync_type(v, *vi);
  }
  return proto;
}

namespace {

void put_inline(const Value* v, onnx::TensorProto& tp) {
  auto enc = v->initializer_encoding();
  if (enc == TensorEncoding::kExternal) enc = TensorEncoding::kRaw;
  tp = tensor_to_proto(*v->initializer(), enc);
  const auto& shell = v->initializer_shell();
  tp.set_name(v->name());
  if (shell.has_doc_string()) tp.set_doc_string(shell.doc_string());
  tp.GetReflection()->MutableUnknownFields(&tp)->MergeFrom(
      shell.GetReflection()->GetUnknownFields(shell));
}

namespace wire {
using google::protobuf::io::CodedOutputStream;
constexpr uint32_t kLen = 2;  // length-delimited wire type
constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
uint32_t tag(int field) {
  return static_cast<uint32_t>(field << 3) | kLen;
}
size_t field_size(int field, size_t len) {
  return CodedOutputStream::VarintSize32(tag(field)) + CodedOutputStream::VarintSize64(len) + len;
}
}  // namespace wire

// Serializes the model with every inline initializer payload copied straight from its storage into
// the stream, so saving never holds a second copy of the weights. Protobuf parsers merge fields in
// wire order, so emitting the graph's initializers after its other fields (and a tensor's raw_data
// after its other fields) parses to the same message.
bool write_streamed(std::ostream& os, const Model& model, bool inferred_value_info) {
  using namespace wire;
  onnx::ModelProto proto = ModelIO::to_proto(model, inferred_value_info, nullptr);
  onnx::GraphProto graph = std::move(*proto.mutable_graph());
  proto.clear_graph();
  struct Item {
    onnx::TensorProto header;  // everything but raw_data when `raw` is set
    const Tensor* raw = nullptr;
    size_t size = 0;
  };
  // Sizes are computed (and cached, for SerializeWithCachedSizes) only once `items` no longer
  // moves: a moved TensorProto loses the cached byte sizes of its packed varint fields (int64_data,
  // int32_data), which then serialized as empty while counted in the lengths: an unreadable file.
  std::vector<Item> items;
  items.reserve(model.graph->initializers().size());
  for (const Value* v : model.graph->initializers()) {
    Item& it = items.emplace_back();
    const Tensor& t = *v->initializer();
    // Sub-byte types are packed on the way out (tensor_to_proto), so they take the copying path.
    const bool raw = t.dtype() != DType::kString && !is_subbyte(t.dtype()) &&
                     v->initializer_encoding() != TensorEncoding::kTyped;
    if (raw) {
      it.header.set_data_type(static_cast<int32_t>(t.dtype()));
      for (int64_t d : t.dims()) it.header.add_dims(d);
      it.header.set_name(v->name());
      const auto& shell = v->initializer_shell();
      if (shell.has_doc_string()) it.header.set_doc_string(shell.doc_string());
      it.header.GetReflection()
          ->MutableUnknownFields(&it.header)
          ->MergeFrom(shell.GetReflection()->GetUnknownFields(shell));
      it.raw = &t;
    } else {
      put_inline(v, it.header);
    }
  }
  size_t graph_size = graph.ByteSizeLong();
  for (Item& it : items) {
    it.size = it.header.ByteSizeLong();
    if (it.raw != nullptr) it.size += field_size(kTensorRawData, it.raw->nbytes());
    graph_size += field_size(kGraphInitializer, it.size);
  }
  proto.ByteSizeLong();  // caches sizes for SerializeWithCachedSizes
  google::protobuf::io::OstreamOutputStream zos(&os);
  {
    CodedOutputStream out(&zos);
    proto.SerializeWithCachedSizes(&out);
    out.WriteVarint32(tag(kModelGraph));
    out.WriteVarint64(graph_size);
    graph.SerializeWithCachedSizes(&out);
    for (const Item& it : items) {
      out.WriteVarint32(tag(kGraphInitializer));
      out.WriteVarint64(it.size);
      it.header.SerializeWithCachedSizes(&out);
      if (it.raw != nullptr) {
        out.WriteVarint32(tag(kTensorRawData));
        out.WriteVarint64(it.raw->nbytes());
        const char* p = static_cast<const char*>(it.raw->raw_data());
        for (size_t done = 0, n = it.raw->nbytes(); done < n;) {
          const size_t chunk = std::min<size_t>(n - done, size_t{1} << 30);
          out.WriteRaw(p + done, static_cast<int>(chunk));
          done += chunk;
        }
      }
    }
    if (out.HadError()) return false;
  }
  return static_cast<bool>(os);
}

}  // namespace

Result<Model> model_from_proto(onnx::ModelProto proto, const std::string& base_dir,
                               const std::string& path) {
  return ModelIO::from_proto(std::move(proto), base_dir, path);
}

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

// Fields of one message that the reader does not take apart, kept as wire bytes and merged into
// their message every ~1 MiB (parsing concatenated bytes is merging, so the result is the same
// message as one parse), which bounds the extra memory to about one field.
class FieldBuffer {
 public:
  explicit FieldBuffer(google::protobuf::Message* target) : target_(target) {}
  // Copies the field whose tag was just read.
  bool copy(CodedInputStream& in, uint32_t tag) {
    {
      StringOutputStream sos(&bytes_);
      CodedOutputStream out(&sos);
      if (!WireFormatLite::SkipField(&in, tag, &out)) return false;
    }
    return bytes_.size() < (size_t{1} << 20) || flush();
  }
  bool flush() {
    const bool ok = bytes_.empty() || target_->MergeFromString(bytes_);
    bytes_.clear();
    bytes_.shrink_to_fit();
    return ok;
  }

 private:
  google::protobuf::Message* target_;
  std::string bytes_;
};

constexpr int kModelGraphField = 7, kGraphNodeField = 1, kGraphInitializerField = 5,
              kTensorRawDataField = 9;

bool is_submessage(uint32_t tag, int field) {
  return WireFormatLite::GetTagFieldNumber(tag) == field &&
         WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// One length-delimited field's length, checked against what is left of the file.
bool read_length(CodedInputStream& in, size_t file_size, int* length) {
  uint32_t n = 0;
  if (!in.ReadVarint32(&n) || n > static_cast<uint32_t>(INT32_MAX)) return false;
  if (static_cast<size_t>(in.CurrentPosition()) + n > file_size) return false;
  *length = static_cast<int>(n);
  return true;
}

// An initializer: raw_data read straight into a string of its exact size (which the tensor
// adopts), the other fields parsed as usual.
bool read_initializer(CodedInputStream& in, size_t file_size, onnx::TensorProto* tp) {
  FieldBuffer rest(tp);
  std::string raw;
  bool has_raw = false;
  while (uint32_t tag = in.ReadTag()) {
    if (is_submessage(tag, kTensorRawDataField)) {
      int n = 0;
      if (!read_length(in, file_size, &n)) return false;
      std::string bytes(static_cast<size_t>(n), '\0');
      if (n > 0 && !in.ReadRaw(bytes.data(), n)) return false;
      raw = std::move(bytes);  // the last occurrence wins, as in a parse
      has_raw = true;
    } else if (!rest.copy(in, tag)) {
      return false;
    }
  }
  if (!rest.flush()) return false;
  if (has_raw) tp->set_raw_data(std::move(raw));
  return true;
}

bool read_graph(CodedInputStream& in, size_t file_size, onnx::GraphProto* gp) {
  FieldBuffer rest(gp);
  while (uint32_t tag = in.ReadTag()) {
    const bool initializer = is_submessage(tag, kGraphInitializerField);
    if (initializer || is_submessage(tag, kGraphNodeField)) {
      // Initializers hold the weights; nodes may hold large Constant values. Both are read in
      // place, the others through the buffer. Repeated fields keep their order either way.
      int n = 0;
      if (!read_length(in, file_size, &n)) return false;
      if (!rest.flush()) return false;
      const auto limit = in.PushLimit(n);
      const bool ok = initializer ? read_initializer(in, file_size, gp->add_initializer())
                                  : gp->add_node()->MergePartialFromCodedStream(&in);
      if (!ok || in.BytesUntilLimit() != 0) return false;
      in.PopLimit(limit);
    } else if (!rest.copy(in, tag)) {
      return false;
    }
  }
  return rest.flush();
}

// Parses a serialized ModelProto from `fd` into `proto` with every initializer's raw_data read
// once, into a string of its exact size: a plain parse grows strings over 50 MB by doubling (up to
// twice the tensor, and a reallocation copy), and parsing from a whole-file buffer or mapping would
// hold the file's bytes next to the tensors. False on a malformed file.
bool read_model_proto(int fd, size_t file_size, onnx::ModelProto* proto) {
  google::protobuf::io::FileInputStream raw(fd);
  CodedInputStream in(&raw);
  in.SetTotalBytesLimit(INT32_MAX);
  FieldBuffer rest(proto);
  while (uint32_t tag = in.ReadTag()) {
    if (is_submessage(tag, kModelGraphField)) {
      int n = 0;
      if (!read_length(in, file_size, &n)) return false;
      const auto limit = in.PushLimit(n);
      if (!read_graph(in, file_size, proto->mutable_graph()) || in.BytesUntilLimit() != 0)
        return false;
      in.PopLimit(limit);
    } else if (!rest.copy(in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage() && rest.flush();
}

}  // namespace

Result<Model> load_model(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error(path + ": not a regular file");
  }
  onnx::ModelProto proto;
  bool parsed = read_model_proto(fd, static_cast<size_t>(st.st_size), &proto);
  if (!parsed && ::lseek(fd, 0, SEEK_SET) == 0) {
    // Whatever the reader refused, protobuf's own parser has the last word.
    proto.Clear();
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT32_MAX);
    parsed = proto.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!parsed)
    return invalid_model(
        path + ": not a valid ONNX model (protobuf parse failed; truncated or not an .onnx file)");
  if (!proto.has_graph()) return invalid_model(path + ": not a valid ONNX model (no graph)");
  if (proto.ir_version() <= 0)
    return invalid_model(path + ": not a valid ONNX model (no ir_version)");
  std::string base = fs::path(path).parent_path().string();
  auto m = model_from_proto(std::move(proto), base.empty() ? "." : base, path);
  if (!m.is_ok()) return m.status().with_context(path + ": ");
  return m;
}

onnx::ModelProto model_to_proto(const Model& model, bool write_inferred_value_info) {
  return ModelIO::to_proto(model, write_inferred_value_info, put_inline);
}

size_t weight_bytes(const Model& model) {
  size_t total = 0;
  for (const Value* v : model.graph->initializers()) total += v->initializer()->nbytes();
  return total;
}

Status save_model(const Model& model, const std::string& path, const SaveOptions& options) {
  std::error_code ec;
  if (!model.path.empty() && fs::equivalent(model.path, path, ec))
    return invalid_argument(path + ": refusing to overwrite the model's own input file");
  bool had_external = false;
  for (const Value* v : model.graph->initializers())
    if (v->initializer_shell().data_location() == onnx::TensorProto::EXTERNAL) had_external = true;
  bool external = options.external == SaveOptions::External::kAlways ||
                  (options.external == SaveOptions::External::kAuto &&
                   (had_external || weight_bytes(model) >= kTwoGiB - (64u << 20)));

  fs::path out(path);
  if (!external && weight_bytes(model) >= kTwoGiB)
    return invalid_argument(path + ": weights are over 2 GiB; save them as external data");
  if (!external) {
    auto write = [&](std::ostream& os) {
      return write_streamed(os, model, options.write_inferred_value_info);
    };
    return write_file_atomically(path, write);
  }

  std::string data_name =
      options.data_file.empty() ? out.filename().string() + ".data" : options.data_file;
  XOPT_ASSIGN_OR_RETURN(
      std::string data_path,
      resolve_external_path(out.parent_path().empty() ? "." : out.parent_path().string(),
                            data_name));
  // Lay out the data file first (tensors >= threshold, 4 KiB aligned so they can be mapped
  // directly).
  std::vector<std::pair<const Value*, size_t>> placed;
  size_t offset = 0;
  for (const Value* v : model.graph->initializers()) {
    const Tensor& t = *v->initializer();
    if (t.dtype() == DType::kString || packed_nbytes(t) < options.external_threshold) continue;
    offset = (offset + 4095) & ~size_t{4095};
    placed.emplace_back(v, offset);
    offset += packed_nbytes(t);
  }
  std::unordered_map<const Value*, size_t> where(placed.begin(), placed.end());
  auto put = [&](const Value* v, onnx::TensorProto& tp) {
    auto it = where.find(v);
    if (it == where.end()) {
      put_inline(v, tp);
      if (tp.data_location() == onnx::TensorProto::EXTERNAL) tp.clear_data_location();
      tp.clear_external_data();
      return;
    }
    const Tensor& t = *v->initializer();
    tp.set_name(v->name());
    tp.set_data_type(static_cast<int32_t>(t.dtype()));
    for (int64_t d : t.dims()) tp.add_dims(d);
    const auto& shell = v->initializer_shell();
    if (shell.has_doc_string()) tp.set_doc_string(shell.doc_string());
    tp.set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& val) {
      auto* e = tp.add_external_data();
      e->set_key(k);
      e->set_value(val);
    };
    kv("location", data_name);
    kv("offset", std::to_string(it->second));
    kv("length", std::to_string(packed_nbytes(t)));
  };
  onnx::ModelProto proto = ModelIO::to_proto(model, options.write_inferred_value_info, put);
  if (proto.ByteSizeLong() >= kTwoGiB)
    return invalid_argument(path + ": model graph alone is over 2 GiB even with external data");
  // The data file is written first: a model file never points at missing data.
  XOPT_RETURN_IF_ERROR(write_file_atomically(data_path, [&](std::ostream& os) {
    size_t pos = 0;
    static const char zeros[4096] = {};
    for (const auto& [v, off] : placed) {
      if (off > pos) os.write(zeros, static_cast<std::streamsize>(off - pos));
      const Tensor& t = *v->initializer();
      // Sub-byte tensors are packed into a temporary (half or a quarter of their memory size).
      const std::string packed = is_subbyte(t.dtype()) ? packed_data(t) : std::string();
      const char* p =
          is_subbyte(t.dtype()) ? packed.data() : static_cast<const char*>(t.raw_data());
      size_t n = packed_nbytes(t);
      // Write in chunks so a huge tensor never needs a second copy in memory.
      for (size_t done = 0; done < n;) {
        size_t chunk = std::min<size_t>(n - done, size_t{64} << 20);
        os.write(p + done, static_cast<std::streamsize>(chunk));
        done += chunk;
      }
      pos = off + n;
    }
    return static_cast<bool>(os);
  }));
  Status st =
      write_file_atomically(path, [&](std::ostream& os) { return proto.SerializeToOstream(&os); });
  if (!st.is_ok()) std::remove(data_path.c_str());  // no data file without its model
  return st;
}

}  // namespace xopt::ir
