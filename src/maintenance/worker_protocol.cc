#include "maintenance/worker_protocol.h"

#include <algorithm>
#include <stdexcept>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::maintenance::protocol {
namespace {

using Json = nlohmann::json;

// What does not fit, named; turned into kInvalidInput by Decode.
struct Misfit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T Field(const Json& j, const char* name) {
  if (!j.is_object()) throw Misfit(std::string("an object with ") + name + " is " + j.type_name());
  auto it = j.find(name);
  if (it == j.end()) throw Misfit(std::string("no ") + name);
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    throw Misfit(std::string(name) + " is a " + it->type_name() + " of the wrong kind");
  }
}

// A field that may be missing or null: `fallback` then.
template <typename T>
T Optional(const Json& j, const char* name, T fallback) {
  if (!j.is_object() || !j.contains(name) || j[name].is_null()) return fallback;
  return Field<T>(j, name);
}

// Maps keyed by field id are JSON objects keyed by the id's digits; bounds are hex.
template <typename V>
Json ById(const std::map<int32_t, V>& by_id, bool hex = false) {
  Json out = Json::object();
  for (const auto& [id, v] : by_id) {
    if constexpr (std::is_same_v<V, std::string>) {
      out[std::to_string(id)] = hex ? crypto::HexEncode(v) : v;
    } else {
      out[std::to_string(id)] = v;
    }
  }
  return out;
}
template <typename V>
std::map<int32_t, V> FromById(const Json& j, const char* name, bool hex = false) {
  std::map<int32_t, V> out;
  const Json& object = Optional<Json>(j, name, Json::object());
  if (!object.is_object()) throw Misfit(std::string(name) + " is not an object");
  for (const auto& [key, value] : object.items()) {
    auto id = ParseInt(key);
    if (!id || *id < INT32_MIN || *id > INT32_MAX) {
      throw Misfit(std::string(name) + " has a key that is no field id: " + key);
    }
    if constexpr (std::is_same_v<V, std::string>) {
      if (!value.is_string()) throw Misfit(std::string(name) + "[" + key + "] is not a string");
      if (!hex) {
        out[static_cast<int32_t>(*id)] = value.template get<std::string>();
        continue;
      }
      auto raw = crypto::HexDecode(value.template get<std::string>());
      if (!raw) throw Misfit(std::string(name) + "[" + key + "] is not hex");
      out[static_cast<int32_t>(*id)] = std::move(*raw);
    } else {
      if (!value.is_number_integer())
        throw Misfit(std::string(name) + "[" + key + "] is not a count");
      out[static_cast<int32_t>(*id)] = value.template get<V>();
    }
  }
  return out;
}

}  // namespace

std::optional<int64_t> RowMove::Moved(int64_t pos) const {
  auto below = std::lower_bound(dropped.begin(), dropped.end(), pos);
  if (below != dropped.end() && *below == pos) return std::nullopt;
  return offset + pos - (below - dropped.begin());
}

// nlohmann's conversions for the nested structs (found by argument-dependent lookup).
void to_json(Json& j, const FileMetrics& m) { j = Encode(m); }
void from_json(const Json& j, FileMetrics& m) {
  m.record_count = Field<int64_t>(j, "record_count");
  m.file_size_in_bytes = Field<int64_t>(j, "file_size_in_bytes");
  m.column_sizes = FromById<int64_t>(j, "column_sizes");
  m.value_counts = FromById<int64_t>(j, "value_counts");
  m.null_value_counts = FromById<int64_t>(j, "null_value_counts");
  m.lower_bounds = FromById<std::string>(j, "lower_bounds", true);
  m.upper_bounds = FromById<std::string>(j, "upper_bounds", true);
  m.split_offsets = Optional<std::vector<int64_t>>(j, "split_offsets", {});
}
void to_json(Json& j, const RowMove& m) {
  j = Json{{"to", m.to}, {"offset", m.offset}, {"rows", m.rows}, {"dropped", m.dropped}};
}
void from_json(const Json& j, RowMove& m) {
  m.to = Field<std::string>(j, "to");
  m.offset = Field<int64_t>(j, "offset");
  m.rows = Field<int64_t>(j, "rows");
  m.dropped = Field<std::vector<int64_t>>(j, "dropped");
  std::sort(m.dropped.begin(), m.dropped.end());
}
void to_json(Json& j, const CompactInput& in) {
  j = Json{{"path", in.path},
           {"data_path", in.data_path},
           {"delete_files", in.position_delete_files},
           {"equality_delete_files", in.equality_delete_files},
           {"deleted_positions", in.deleted_positions},
           {"first_row_id", in.first_row_id ? Json(*in.first_row_id) : Json()},
           {"data_sequence_number", in.data_sequence_number}};
}
void from_json(const Json& j, CompactInput& in) {
  in.path = Field<std::string>(j, "path");
  in.data_path = Field<std::string>(j, "data_path");
  in.position_delete_files = Optional<std::vector<size_t>>(j, "delete_files", {});
  in.equality_delete_files = Optional<std::vector<size_t>>(j, "equality_delete_files", {});
  in.deleted_positions = Optional<std::vector<int64_t>>(j, "deleted_positions", {});
  if (j.contains("first_row_id") && !j["first_row_id"].is_null()) {
    in.first_row_id = Field<int64_t>(j, "first_row_id");
  }
  in.data_sequence_number = Optional<int64_t>(j, "data_sequence_number", 0);
}
void to_json(Json& j, const EqualityDeleteFile& f) {
  j = Json{{"path", f.path}, {"equality_ids", f.equality_ids}};
}
void from_json(const Json& j, EqualityDeleteFile& f) {
  f.path = Field<std::string>(j, "path");
  f.equality_ids = Field<std::vector<int32_t>>(j, "equality_ids");
}
void to_json(Json& j, const SchemaField& f) { j = Json{{"id", f.id}, {"name", f.name}}; }
void from_json(const Json& j, SchemaField& f) {
  f.id = Field<int32_t>(j, "id");
  f.name = Field<std::string>(j, "name");
}
void to_json(Json& j, const InputRows& r) {
  j = Json{
      {"data_path", r.data_path}, {"offset", r.offset}, {"rows", r.rows}, {"dropped", r.dropped}};
}
void from_json(const Json& j, InputRows& r) {
  r.data_path = Field<std::string>(j, "data_path");
  r.offset = Field<int64_t>(j, "offset");
  r.rows = Field<int64_t>(j, "rows");
  r.dropped = Field<std::vector<int64_t>>(j, "dropped");
}
void to_json(Json& j, const SequencedFile& f) {
  j = Json{{"path", f.path}, {"sequence", f.sequence}};
}
void from_json(const Json& j, SequencedFile& f) {
  f.path = Field<std::string>(j, "path");
  f.sequence = Field<int64_t>(j, "sequence");
}

namespace {

// An answer: the file's metrics and the job's own counts, in one object.
Json WithFile(const FileMetrics& file, Json counts) {
  Json out = Encode(file);
  for (auto& [k, v] : counts.items()) out[k] = std::move(v);
  return out;
}
Json WithFile(const DeletesWritten& written, Json counts) {
  counts["referenced_data_files"] = written.referenced_data_files;
  if (written.referenced_data_file) counts["referenced_data_file"] = *written.referenced_data_file;
  return WithFile(written.file, std::move(counts));
}
void ReadWritten(const Json& j, DeletesWritten& written) {
  from_json(j, written.file);
  written.referenced_data_files = Field<int64_t>(j, "referenced_data_files");
  if (j.contains("referenced_data_file")) {
    written.referenced_data_file = Field<std::string>(j, "referenced_data_file");
  }
}

template <typename T, typename Fill>
Result<T> Decoded(const char* what, const Fill& fill) {
  try {
    T out;
    fill(out);
    return out;
  } catch (const Misfit& e) {
    return Fail(ErrorCode::kInvalidInput, std::string("a malformed ") + what + ": " + e.what());
  } catch (const Json::exception& e) {
    return Fail(ErrorCode::kInvalidInput, std::string("a malformed ") + what + ": " + e.what());
  }
}

}  // namespace

Json Encode(const FileMetrics& m) {
  return Json{{"record_count", m.record_count},
              {"file_size_in_bytes", m.file_size_in_bytes},
              {"column_sizes", ById(m.column_sizes)},
              {"value_counts", ById(m.value_counts)},
              {"null_value_counts", ById(m.null_value_counts)},
              {"lower_bounds", ById(m.lower_bounds, true)},
              {"upper_bounds", ById(m.upper_bounds, true)},
              {"split_offsets", m.split_offsets}};
}
template <>
Result<FileMetrics> Decode<FileMetrics>(const Json& json) {
  return Decoded<FileMetrics>("file's metrics", [&](FileMetrics& m) { from_json(json, m); });
}

Json Encode(const RowMoves& moves) {
  Json out = Json::object();
  for (const auto& [from, move] : moves) out[from] = move;
  return out;
}
template <>
Result<RowMoves> Decode<RowMoves>(const Json& json) {
  return Decoded<RowMoves>("record of moved rows", [&](RowMoves& moves) {
    if (!json.is_object()) throw Misfit("not an object");
    for (const auto& [from, move] : json.items()) moves[from] = move.get<RowMove>();
  });
}

Json Encode(const CompactPlan& p) {
  return Json{{"inputs", p.inputs},
              {"position_deletes", p.position_deletes},
              {"equality_deletes", p.equality_deletes},
              {"schema", p.schema},
              {"output", p.output},
              {"max_threads", p.max_threads},
              {"row_lineage", p.row_lineage}};
}
template <>
Result<CompactPlan> Decode<CompactPlan>(const Json& json) {
  return Decoded<CompactPlan>("compaction plan", [&](CompactPlan& p) {
    p.inputs = Field<std::vector<CompactInput>>(json, "inputs");
    p.position_deletes = Optional<std::vector<std::string>>(json, "position_deletes", {});
    p.equality_deletes = Optional<std::vector<EqualityDeleteFile>>(json, "equality_deletes", {});
    p.schema = Field<std::vector<SchemaField>>(json, "schema");
    p.output = Field<std::string>(json, "output");
    p.max_threads = Optional<int>(json, "max_threads", 1);
    p.row_lineage = Optional<bool>(json, "row_lineage", false);
  });
}

Json Encode(const CompactAnswer& a) {
  return WithFile(a.file, {{"rows_read", a.rows_read},
                           {"rows_deleted", a.rows_deleted},
                           {"rows_deleted_by_equality", a.rows_deleted_by_equality},
                           {"row_map", a.row_map}});
}
template <>
Result<CompactAnswer> Decode<CompactAnswer>(const Json& json) {
  return Decoded<CompactAnswer>("compaction answer", [&](CompactAnswer& a) {
    from_json(json, a.file);
    a.rows_read = Field<int64_t>(json, "rows_read");
    a.rows_deleted = Field<int64_t>(json, "rows_deleted");
    a.rows_deleted_by_equality = Field<int64_t>(json, "rows_deleted_by_equality");
    a.row_map = Field<std::vector<InputRows>>(json, "row_map");
  });
}

Json Encode(const RewriteDeletesPlan& p) {
  return Json{{"inputs", p.inputs}, {"live", p.live}, {"output", p.output}};
}
template <>
Result<RewriteDeletesPlan> Decode<RewriteDeletesPlan>(const Json& json) {
  return Decoded<RewriteDeletesPlan>("delete merge plan", [&](RewriteDeletesPlan& p) {
    p.inputs = Field<std::vector<SequencedFile>>(json, "inputs");
    p.live = Field<std::vector<SequencedFile>>(json, "live");
    p.output = Field<std::string>(json, "output");
  });
}

Json Encode(const RewriteDeletesAnswer& a) {
  return WithFile(a.written, {{"rows_read", a.rows_read}, {"rows_dropped", a.rows_dropped}});
}
template <>
Result<RewriteDeletesAnswer> Decode<RewriteDeletesAnswer>(const Json& json) {
  return Decoded<RewriteDeletesAnswer>("delete merge answer", [&](RewriteDeletesAnswer& a) {
    ReadWritten(json, a.written);
    a.rows_read = Field<int64_t>(json, "rows_read");
    a.rows_dropped = Field<int64_t>(json, "rows_dropped");
  });
}

Json Encode(const TranslateDeletesPlan& p) {
  Json out = {{"moves", Encode(p.moves)}, {"output", p.output}};
  if (!p.input.empty()) out["input"] = p.input;
  if (!p.removed_files.empty()) out["removed_files"] = p.removed_files;
  return out;
}
template <>
Result<TranslateDeletesPlan> Decode<TranslateDeletesPlan>(const Json& json) {
  return Decoded<TranslateDeletesPlan>("delete translation plan", [&](TranslateDeletesPlan& p) {
    p.input = Optional<std::string>(json, "input", "");
    p.removed_files = Optional<std::vector<std::string>>(json, "removed_files", {});
    if (p.input.empty() == p.removed_files.empty()) {
      throw Misfit("it needs an input or removed files, not both");
    }
    auto moves = Decode<RowMoves>(Field<Json>(json, "moves"));
    if (!moves) throw Misfit(moves.error().message);
    p.moves = std::move(*moves);
    p.output = Field<std::string>(json, "output");
  });
}

Json Encode(const TranslateDeletesAnswer& a) {
  return WithFile(
      a.written,
      {{"rows_read", a.rows_read}, {"rows_moved", a.rows_moved}, {"rows_dropped", a.rows_dropped}});
}
template <>
Result<TranslateDeletesAnswer> Decode<TranslateDeletesAnswer>(const Json& json) {
  return Decoded<TranslateDeletesAnswer>("delete translation answer",
                                         [&](TranslateDeletesAnswer& a) {
                                           ReadWritten(json, a.written);
                                           a.rows_read = Field<int64_t>(json, "rows_read");
                                           a.rows_moved = Field<int64_t>(json, "rows_moved");
                                           a.rows_dropped = Field<int64_t>(json, "rows_dropped");
                                         });
}

}  // namespace tablemere::maintenance::protocol
