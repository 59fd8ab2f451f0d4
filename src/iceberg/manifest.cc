#include "iceberg/manifest.h"

#include <cctype>
#include <functional>
#include <limits>

namespace tablemere::iceberg {
namespace {

std::unexpected<Error> Bad(std::string message) {
  return Fail(ErrorCode::kInvalidInput, std::move(message));
}

// A union's non-null branch (the type itself when it is not a union).
const avro::Node& NonNull(const avro::Node& n) {
  if (n.type != avro::Type::kUnion) return n;
  for (const auto& b : n.branches) {
    if (b->type != avro::Type::kNull) return *b;
  }
  return n;
}

// A field of a decoded record, read by name: absent and null are both "no value".
class Record {
 public:
  Record(const avro::Node& node, const avro::Value& value, std::string context)
      : node_(node), value_(value), context_(std::move(context)) {}

  // The field's type (through a union, the branch it took) and value, or {nullptr, nullptr}.
  std::pair<const avro::Node*, const avro::Value*> Get(const std::string& name) const {
    int at = node_.FieldIndex(name);
    if (at < 0 || static_cast<size_t>(at) >= value_.items.size()) return {nullptr, nullptr};
    const avro::Node* type = node_.fields[static_cast<size_t>(at)].type.get();
    const avro::Value* v = &value_.items[static_cast<size_t>(at)];
    if (type->type == avro::Type::kUnion) {
      if (v->index >= type->branches.size() || v->items.empty()) return {nullptr, nullptr};
      type = type->branches[v->index].get();
      v = &v->items[0];
    }
    if (type->type == avro::Type::kNull) return {nullptr, nullptr};
    return {type, v};
  }

  std::optional<int64_t> Long(const std::string& name) const {
    auto [type, v] = Get(name);
    if (!type || (type->type != avro::Type::kInt && type->type != avro::Type::kLong)) {
      return std::nullopt;
    }
    return v->i;
  }
  std::optional<bool> Bool(const std::string& name) const {
    auto [type, v] = Get(name);
    if (!type || type->type != avro::Type::kBoolean) return std::nullopt;
    return v->b;
  }
  // A string or bytes field.
  std::optional<std::string> Bytes(const std::string& name) const {
    auto [type, v] = Get(name);
    if (!type || (type->type != avro::Type::kString && type->type != avro::Type::kBytes &&
                  type->type != avro::Type::kFixed)) {
      return std::nullopt;
    }
    return v->s;
  }
  Result<int64_t> RequireLong(const std::string& name) const {
    auto v = Long(name);
    if (!v) return Bad(context_ + " has no " + name);
    return *v;
  }
  Result<std::string> RequireBytes(const std::string& name) const {
    auto v = Bytes(name);
    if (!v) return Bad(context_ + " has no " + name);
    return *v;
  }
  Result<int32_t> RequireInt(const std::string& name) const {
    TM_ASSIGN(int64_t v, RequireLong(name));
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return Bad(context_ + ": " + name + " out of range");
    }
    return static_cast<int32_t>(v);
  }
  const std::string& context() const { return context_; }

 private:
  const avro::Node& node_;
  const avro::Value& value_;
  std::string context_;
};

// Iceberg's map<int, X>: an array of {key, value} records (or, from other writers, an
// Avro map with the ids as string keys); `add` takes each pair's value.
Result<void> ReadIntMap(
    const Record& r, const std::string& name,
    const std::function<Result<void>(int32_t, const avro::Node&, const avro::Value&)>& add) {
  auto [type, v] = r.Get(name);
  if (!type) return {};
  auto id_of = [&](int64_t key) -> Result<int32_t> {
    if (key < std::numeric_limits<int32_t>::min() || key > std::numeric_limits<int32_t>::max()) {
      return Bad(r.context() + ": a " + name + " key out of range");
    }
    return static_cast<int32_t>(key);
  };
  if (type->type == avro::Type::kMap) {
    for (const auto& [key, value] : v->entries) {
      char* end = nullptr;
      long long id = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0') return Bad(r.context() + ": a " + name + " key " + key);
      TM_ASSIGN(int32_t field, id_of(id));
      TM_TRY(add(field, *type->items, value));
    }
    return {};
  }
  if (type->type != avro::Type::kArray || type->items->type != avro::Type::kRecord) {
    return Bad(r.context() + ": " + name + " is not a map");
  }
  for (const auto& kv : v->items) {
    Record pair(*type->items, kv, r.context() + " " + name);
    TM_ASSIGN(int64_t key, pair.RequireLong("key"));
    TM_ASSIGN(int32_t field, id_of(key));
    auto [value_type, value] = pair.Get("value");
    if (!value_type) continue;  // a null value: no metric
    TM_TRY(add(field, *value_type, *value));
  }
  return {};
}

Result<std::map<int32_t, int64_t>> CountMap(const Record& r, const std::string& name) {
  std::map<int32_t, int64_t> out;
  TM_TRY(ReadIntMap(r, name,
                    [&](int32_t id, const avro::Node& t, const avro::Value& v) -> Result<void> {
                      if (t.type != avro::Type::kInt && t.type != avro::Type::kLong) {
                        return Bad(r.context() + ": " + name + " holds " + avro::Name(t.type));
                      }
                      out[id] = v.i;
                      return {};
                    }));
  return out;
}

Result<std::map<int32_t, std::string>> BytesMap(const Record& r, const std::string& name) {
  std::map<int32_t, std::string> out;
  TM_TRY(ReadIntMap(r, name,
                    [&](int32_t id, const avro::Node& t, const avro::Value& v) -> Result<void> {
                      if (t.type != avro::Type::kBytes && t.type != avro::Type::kFixed) {
                        return Bad(r.context() + ": " + name + " holds " + avro::Name(t.type));
                      }
                      out[id] = v.s;
                      return {};
                    }));
  return out;
}

// An array<long> or array<int> field's elements.
Result<std::vector<int64_t>> LongArray(const Record& r, const std::string& name) {
  std::vector<int64_t> out;
  auto [type, v] = r.Get(name);
  if (!type) return out;
  if (type->type != avro::Type::kArray || (NonNull(*type->items).type != avro::Type::kLong &&
                                           NonNull(*type->items).type != avro::Type::kInt)) {
    return Bad(r.context() + ": " + name + " is not a list of numbers");
  }
  for (const auto& item : v->items) {
    const avro::Value& x = item.Unwrapped();
    if (x.type == avro::Type::kNull) continue;
    out.push_back(x.i);
  }
  return out;
}

template <typename E>
Result<E> Enumerated(int64_t v, int64_t last, const std::string& what) {
  if (v < 0 || v > last) return Bad(what + " " + std::to_string(v) + " is not one Iceberg knows");
  return static_cast<E>(v);
}

// Makes a field's value for its (resolved, non-union) type; nullopt when there is none.
using Maker = std::function<Result<std::optional<avro::Value>>(const avro::Node&)>;

// The value of a field of type `type`: through a union, the first branch that is not
// null, or null when `make` has nothing.
Result<avro::Value> Put(const avro::Node& type, const std::string& name, const Maker& make) {
  if (type.type != avro::Type::kUnion) {
    TM_ASSIGN(auto v, make(type));
    if (!v) return Bad(name + " is required by the manifest's schema");
    return std::move(*v);
  }
  std::optional<size_t> null_branch, value_branch;
  for (size_t i = 0; i < type.branches.size(); i++) {
    if (type.branches[i]->type == avro::Type::kNull) {
      if (!null_branch) null_branch = i;
    } else if (!value_branch) {
      value_branch = i;
    }
  }
  std::optional<avro::Value> v;
  if (value_branch) {
    TM_ASSIGN(v, make(*type.branches[*value_branch]));
  }
  if (v) return avro::Value::Union(*value_branch, std::move(*v));
  if (!null_branch) return Bad(name + " is required by the manifest's schema");
  return avro::Value::Union(*null_branch, avro::Value::Null());
}

Maker LongOf(std::optional<int64_t> v, const std::string& name) {
  return [v, name](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (!v) return std::nullopt;
    if (t.type == avro::Type::kLong) return avro::Value::Long(*v);
    if (t.type == avro::Type::kInt) {
      if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
        return Bad(name + " does not fit an int");
      }
      return avro::Value::Int(static_cast<int32_t>(*v));
    }
    return Bad(name + " is not a number in the manifest's schema");
  };
}

Maker BoolOf(std::optional<bool> v, const std::string& name) {
  return [v, name](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (!v) return std::nullopt;
    if (t.type != avro::Type::kBoolean)
      return Bad(name + " is not a boolean in the manifest's schema");
    return avro::Value::Bool(*v);
  };
}

Maker BytesOf(std::optional<std::string> v, const std::string& name) {
  return [v = std::move(v), name](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (!v) return std::nullopt;
    if (t.type == avro::Type::kString) return avro::Value::String(*v);
    if (t.type == avro::Type::kBytes) return avro::Value::Bytes(*v);
    if (t.type == avro::Type::kFixed && v->size() == t.size) return avro::Value::Fixed(*v);
    return Bad(name + " does not fit the manifest's schema");
  };
}

// A partition value as the Avro type its manifest gives it.
Result<avro::Value> PartitionValue(const avro::Node& t, const Literal& l, const std::string& name) {
  const TypeId id = l.type.id;
  if (id == TypeId::kBoolean && t.type == avro::Type::kBoolean)
    return avro::Value::Bool(l.AsBool());
  if (IsIntegral(id)) {
    TM_ASSIGN(auto v, LongOf(l.AsInt(), name)(t));
    if (v) return std::move(*v);
  }
  if (IsFloating(id)) {
    if (t.type == avro::Type::kFloat) return avro::Value::Float(static_cast<float>(l.AsDouble()));
    if (t.type == avro::Type::kDouble) return avro::Value::Double(l.AsDouble());
  }
  if (id == TypeId::kDecimal) {
    std::string bytes = ToBound(l);
    if (t.type == avro::Type::kBytes) return avro::Value::Bytes(std::move(bytes));
    if (t.type == avro::Type::kFixed && bytes.size() <= t.size) {
      char fill = (static_cast<unsigned char>(bytes[0]) & 0x80) ? '\xff' : '\0';
      return avro::Value::Fixed(std::string(t.size - bytes.size(), fill) + bytes);
    }
  }
  if (id == TypeId::kUuid && t.type == avro::Type::kString)
    return avro::Value::String(l.ToString());
  if (IsBytes(id)) {
    TM_ASSIGN(auto v, BytesOf(l.AsBytes(), name)(t));
    if (v) return std::move(*v);
  }
  return Bad("partition " + name + " (" + l.type.Name() + ") does not fit the manifest's schema");
}

// Iceberg's map<int, X> in the form the schema has: an array of {key, value} records, or
// an Avro map keyed by the id as a string.
template <typename V>
Maker IntMapOf(const std::map<int32_t, V>& m, const std::string& name,
               std::function<Maker(const V&)> value_of) {
  return [&m, name, value_of](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (m.empty()) return std::nullopt;
    if (t.type == avro::Type::kMap) {
      std::vector<std::pair<std::string, avro::Value>> entries;
      for (const auto& [k, v] : m) {
        TM_ASSIGN(auto value, Put(*t.items, name, value_of(v)));
        entries.emplace_back(std::to_string(k), std::move(value));
      }
      return avro::Value::Map(std::move(entries));
    }
    if (t.type != avro::Type::kArray || NonNull(*t.items).type != avro::Type::kRecord) {
      return Bad(name + " is not a map in the manifest's schema");
    }
    const avro::Node& pair = NonNull(*t.items);
    std::vector<avro::Value> items;
    for (const auto& [k, v] : m) {
      std::vector<avro::Value> fields;
      for (const auto& f : pair.fields) {
        Maker make = f.name == "key"     ? LongOf(k, name + " key")
                     : f.name == "value" ? value_of(v)
                                         : LongOf(std::nullopt, f.name);
        TM_ASSIGN(auto value, Put(*f.type, name + "." + f.name, make));
        fields.push_back(std::move(value));
      }
      avro::Value record = avro::Value::Record(std::move(fields));
      TM_ASSIGN(auto item,
                Put(*t.items, name, [&](const avro::Node&) -> Result<std::optional<avro::Value>> {
                  return record;
                }));
      items.push_back(std::move(item));
    }
    return avro::Value::Array(std::move(items));
  };
}

Maker LongListOf(const std::vector<int64_t>& v, const std::string& name) {
  return [&v, name](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (v.empty()) return std::nullopt;
    if (t.type != avro::Type::kArray) return Bad(name + " is not a list in the manifest's schema");
    std::vector<avro::Value> items;
    for (int64_t x : v) {
      TM_ASSIGN(auto item, Put(*t.items, name, LongOf(x, name)));
      items.push_back(std::move(item));
    }
    return avro::Value::Array(std::move(items));
  };
}

// A record of `node`, each field from `field_of(name)`.
Result<avro::Value> RecordOf(const avro::Node& node,
                             const std::function<Maker(const std::string&)>& field_of) {
  if (node.type != avro::Type::kRecord) return Bad(node.name + " is not a record");
  std::vector<avro::Value> fields;
  fields.reserve(node.fields.size());
  for (const auto& f : node.fields) {
    TM_ASSIGN(auto v, Put(*f.type, f.name, field_of(f.name)));
    fields.push_back(std::move(v));
  }
  return avro::Value::Record(std::move(fields));
}

Maker Nothing() {
  return [](const avro::Node&) -> Result<std::optional<avro::Value>> { return std::nullopt; };
}

Maker RecordMaker(std::function<Maker(const std::string&)> field_of) {
  return
      [field_of = std::move(field_of)](const avro::Node& t) -> Result<std::optional<avro::Value>> {
        TM_ASSIGN(auto v, RecordOf(t, field_of));
        return v;
      };
}

}  // namespace

Result<avro::Value> ToAvro(const avro::Node& entry_node, const ManifestEntry& e) {
  const DataFile& d = e.file;
  std::vector<int64_t> equality_ids(d.equality_ids.begin(), d.equality_ids.end());
  auto counts = [](const int64_t& v) { return LongOf(v, "a count"); };
  auto bounds = [](const std::string& v) { return BytesOf(v, "a bound"); };
  auto partition = [&d](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (t.type != avro::Type::kRecord || t.fields.size() != d.partition.size()) {
      return Bad("the partition does not fit the manifest's schema");
    }
    std::vector<avro::Value> values;
    for (size_t i = 0; i < t.fields.size(); i++) {
      const auto& field = t.fields[i];
      const auto& literal = d.partition[i];
      TM_ASSIGN(auto v, Put(*field.type, field.name,
                            [&](const avro::Node& ft) -> Result<std::optional<avro::Value>> {
                              if (!literal) return std::nullopt;
                              TM_ASSIGN(auto value, PartitionValue(ft, *literal, field.name));
                              return value;
                            }));
      values.push_back(std::move(v));
    }
    return avro::Value::Record(std::move(values));
  };
  auto file = [&](const std::string& name) -> Maker {
    if (name == "content") return LongOf(static_cast<int64_t>(d.content), name);
    if (name == "file_path") return BytesOf(d.path, name);
    if (name == "file_format") return BytesOf(d.format, name);
    if (name == "partition") return partition;
    if (name == "record_count") return LongOf(d.record_count, name);
    if (name == "file_size_in_bytes") return LongOf(d.file_size_in_bytes, name);
    if (name == "column_sizes") return IntMapOf<int64_t>(d.column_sizes, name, counts);
    if (name == "value_counts") return IntMapOf<int64_t>(d.value_counts, name, counts);
    if (name == "null_value_counts") return IntMapOf<int64_t>(d.null_value_counts, name, counts);
    if (name == "nan_value_counts") return IntMapOf<int64_t>(d.nan_value_counts, name, counts);
    if (name == "lower_bounds") return IntMapOf<std::string>(d.lower_bounds, name, bounds);
    if (name == "upper_bounds") return IntMapOf<std::string>(d.upper_bounds, name, bounds);
    if (name == "key_metadata") return BytesOf(d.key_metadata, name);
    if (name == "split_offsets") return LongListOf(d.split_offsets, name);
    if (name == "equality_ids") return LongListOf(equality_ids, name);
    if (name == "sort_order_id") return LongOf(d.sort_order_id, name);
    if (name == "first_row_id") return LongOf(d.first_row_id, name);
    if (name == "referenced_data_file") return BytesOf(d.referenced_data_file, name);
    if (name == "content_offset") return LongOf(d.content_offset, name);
    if (name == "content_size_in_bytes") return LongOf(d.content_size, name);
    if (name == "block_size_in_bytes") return LongOf(d.block_size_in_bytes, name);
    return Nothing();
  };
  return RecordOf(entry_node, [&](const std::string& name) -> Maker {
    if (name == "status") return LongOf(static_cast<int64_t>(e.status), name);
    if (name == "snapshot_id") return LongOf(e.snapshot_id, name);
    if (name == "sequence_number") return LongOf(e.sequence_number, name);
    if (name == "file_sequence_number") return LongOf(e.file_sequence_number, name);
    if (name == "data_file") return RecordMaker(file);
    return Nothing();
  });
}

Result<avro::Value> ToAvro(const avro::Node& list_node, const ManifestFile& f) {
  auto summaries = [&f](const avro::Node& t) -> Result<std::optional<avro::Value>> {
    if (t.type != avro::Type::kArray)
      return Bad("partitions is not a list in the manifest list's schema");
    std::vector<avro::Value> items;
    for (const auto& s : f.partitions) {
      TM_ASSIGN(auto item,
                Put(*t.items, "partitions", RecordMaker([&s](const std::string& name) -> Maker {
                  if (name == "contains_null") return BoolOf(s.contains_null, name);
                  if (name == "contains_nan") return BoolOf(s.contains_nan, name);
                  if (name == "lower_bound") return BytesOf(s.lower_bound, name);
                  if (name == "upper_bound") return BytesOf(s.upper_bound, name);
                  return Nothing();
                })));
      items.push_back(std::move(item));
    }
    return avro::Value::Array(std::move(items));
  };
  return RecordOf(list_node, [&](const std::string& name) -> Maker {
    if (name == "manifest_path") return BytesOf(f.path, name);
    if (name == "manifest_length") return LongOf(f.length, name);
    if (name == "partition_spec_id") return LongOf(f.spec_id, name);
    if (name == "content") return LongOf(static_cast<int64_t>(f.content), name);
    if (name == "sequence_number") return LongOf(f.sequence_number, name);
    if (name == "min_sequence_number") return LongOf(f.min_sequence_number, name);
    if (name == "added_snapshot_id") return LongOf(f.added_snapshot_id, name);
    if (name == "added_files_count" || name == "added_data_files_count")
      return LongOf(f.added_files, name);
    if (name == "existing_files_count" || name == "existing_data_files_count")
      return LongOf(f.existing_files, name);
    if (name == "deleted_files_count" || name == "deleted_data_files_count")
      return LongOf(f.deleted_files, name);
    if (name == "added_rows_count") return LongOf(f.added_rows, name);
    if (name == "existing_rows_count") return LongOf(f.existing_rows, name);
    if (name == "deleted_rows_count") return LongOf(f.deleted_rows, name);
    if (name == "partitions") return summaries;
    if (name == "key_metadata") return BytesOf(f.key_metadata, name);
    if (name == "first_row_id") return LongOf(f.first_row_id, name);
    return Nothing();
  });
}

std::vector<FieldSummary> SummarizePartitions(
    const std::vector<PartitionField>& type,
    const std::vector<const std::vector<std::optional<Literal>>*>& partitions) {
  std::vector<FieldSummary> out(type.size());
  for (size_t i = 0; i < type.size(); i++) {
    FieldSummary& s = out[i];
    s.contains_nan = false;
    const Literal *lo = nullptr, *hi = nullptr;
    for (const auto* p : partitions) {
      if (i >= p->size() || !(*p)[i]) {
        s.contains_null = true;
        continue;
      }
      const Literal& v = *(*p)[i];
      if (v.IsNaN()) {
        s.contains_nan = true;
        continue;
      }
      if (!lo || Compare(v, *lo) == std::partial_ordering::less) lo = &v;
      if (!hi || Compare(*hi, v) == std::partial_ordering::less) hi = &v;
    }
    if (lo) s.lower_bound = ToBound(*lo);
    if (hi) s.upper_bound = ToBound(*hi);
  }
  return out;
}

bool DataFile::FormatIs(const char* name) const {
  std::string upper = format;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper == name;
}

Result<std::vector<ManifestFile>> ReadManifestList(const avro::Container& list) {
  const avro::Node& node = *list.schema.root;
  if (node.type != avro::Type::kRecord || node.FieldIndex("manifest_path") < 0) {
    return Bad("not a manifest list");
  }
  std::vector<ManifestFile> out;
  out.reserve(list.records.size());
  for (const auto& value : list.records) {
    Record r(node, value, "a manifest list entry");
    ManifestFile f;
    TM_ASSIGN(f.path, r.RequireBytes("manifest_path"));
    TM_ASSIGN(f.length, r.RequireLong("manifest_length"));
    TM_ASSIGN(f.spec_id, r.RequireInt("partition_spec_id"));
    TM_ASSIGN(f.content,
              Enumerated<ManifestContent>(r.Long("content").value_or(0), 1, "manifest content"));
    f.sequence_number = r.Long("sequence_number").value_or(0);
    f.min_sequence_number = r.Long("min_sequence_number").value_or(0);
    TM_ASSIGN(f.added_snapshot_id, r.RequireLong("added_snapshot_id"));
    // v1 names the file counts for data files only.
    f.added_files = r.Long("added_files_count");
    if (!f.added_files) f.added_files = r.Long("added_data_files_count");
    f.existing_files = r.Long("existing_files_count");
    if (!f.existing_files) f.existing_files = r.Long("existing_data_files_count");
    f.deleted_files = r.Long("deleted_files_count");
    if (!f.deleted_files) f.deleted_files = r.Long("deleted_data_files_count");
    f.added_rows = r.Long("added_rows_count");
    f.existing_rows = r.Long("existing_rows_count");
    f.deleted_rows = r.Long("deleted_rows_count");
    f.key_metadata = r.Bytes("key_metadata");
    f.first_row_id = r.Long("first_row_id");
    auto [ptype, partitions] = r.Get("partitions");
    if (ptype) {
      if (ptype->type != avro::Type::kArray || NonNull(*ptype->items).type != avro::Type::kRecord) {
        return Bad("a manifest list entry's partitions are not field summaries");
      }
      const avro::Node& summary_node = NonNull(*ptype->items);
      for (const auto& item : partitions->items) {
        Record s(summary_node, item.Unwrapped(), "a partition field summary");
        FieldSummary summary;
        summary.contains_null = s.Bool("contains_null").value_or(true);
        summary.contains_nan = s.Bool("contains_nan");
        summary.lower_bound = s.Bytes("lower_bound");
        summary.upper_bound = s.Bytes("upper_bound");
        f.partitions.push_back(std::move(summary));
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<PartitionField>> PartitionType(const avro::Container& manifest) {
  const avro::Node& entry = *manifest.schema.root;
  int file_at = entry.type == avro::Type::kRecord ? entry.FieldIndex("data_file") : -1;
  if (file_at < 0) return Bad("not a manifest: no data_file");
  const avro::Node& file = NonNull(*entry.fields[static_cast<size_t>(file_at)].type);
  int partition_at = file.type == avro::Type::kRecord ? file.FieldIndex("partition") : -1;
  if (partition_at < 0) return Bad("not a manifest: no partition");
  const avro::Node& partition = NonNull(*file.fields[static_cast<size_t>(partition_at)].type);
  if (partition.type != avro::Type::kRecord)
    return Bad("not a manifest: partition is not a record");
  std::vector<PartitionField> out;
  for (const auto& f : partition.fields) {
    PartitionField field;
    field.name = f.name;
    auto id = f.attributes.find("field-id");
    if (id != f.attributes.end() && id->is_number_integer()) field.field_id = id->get<int32_t>();
    TM_ASSIGN(field.type, FromAvro(NonNull(*f.type)));
    out.push_back(std::move(field));
  }
  return out;
}

Result<Manifest> ReadManifest(const avro::Container& container, const ManifestFile& listed) {
  Manifest m;
  TM_ASSIGN(m.partition_type, PartitionType(container));
  auto meta = [&](const char* key) -> std::string {
    auto it = container.metadata.find(key);
    return it == container.metadata.end() ? "" : it->second;
  };
  std::string version = meta("format-version");
  m.format_version = version == "3" ? 3 : version == "2" ? 2 : 1;
  m.spec_id = listed.spec_id;
  m.content = listed.content;
  const avro::Node& entry_node = *container.schema.root;
  // v3: data files without a first row id take the next ids from the manifest's.
  std::optional<int64_t> next_row_id = listed.first_row_id;
  m.entries.reserve(container.records.size());
  for (const auto& value : container.records) {
    Record r(entry_node, value, "a manifest entry of " + listed.path);
    ManifestEntry e;
    TM_ASSIGN(int64_t status, r.RequireLong("status"));
    TM_ASSIGN(e.status, Enumerated<EntryStatus>(status, 2, "entry status"));
    e.snapshot_id = r.Long("snapshot_id").value_or(listed.added_snapshot_id);
    e.sequence_number = r.Long("sequence_number").value_or(listed.sequence_number);
    e.file_sequence_number = r.Long("file_sequence_number").value_or(listed.sequence_number);
    auto [ftype, fvalue] = r.Get("data_file");
    if (!ftype || ftype->type != avro::Type::kRecord) return Bad(r.context() + " has no data_file");
    Record f(*ftype, *fvalue, "a data file in " + listed.path);
    DataFile& d = e.file;
    TM_ASSIGN(d.content, Enumerated<FileContent>(f.Long("content").value_or(0), 2, "file content"));
    TM_ASSIGN(d.path, f.RequireBytes("file_path"));
    TM_ASSIGN(d.format, f.RequireBytes("file_format"));
    TM_ASSIGN(d.record_count, f.RequireLong("record_count"));
    TM_ASSIGN(d.file_size_in_bytes, f.RequireLong("file_size_in_bytes"));
    TM_ASSIGN(d.column_sizes, CountMap(f, "column_sizes"));
    TM_ASSIGN(d.value_counts, CountMap(f, "value_counts"));
    TM_ASSIGN(d.null_value_counts, CountMap(f, "null_value_counts"));
    TM_ASSIGN(d.nan_value_counts, CountMap(f, "nan_value_counts"));
    TM_ASSIGN(d.lower_bounds, BytesMap(f, "lower_bounds"));
    TM_ASSIGN(d.upper_bounds, BytesMap(f, "upper_bounds"));
    d.key_metadata = f.Bytes("key_metadata");
    TM_ASSIGN(d.split_offsets, LongArray(f, "split_offsets"));
    TM_ASSIGN(auto equality_ids, LongArray(f, "equality_ids"));
    for (int64_t id : equality_ids) d.equality_ids.push_back(static_cast<int32_t>(id));
    if (auto order = f.Long("sort_order_id")) d.sort_order_id = static_cast<int32_t>(*order);
    d.first_row_id = f.Long("first_row_id");
    d.referenced_data_file = f.Bytes("referenced_data_file");
    d.content_offset = f.Long("content_offset");
    d.content_size = f.Long("content_size_in_bytes");
    d.block_size_in_bytes = f.Long("block_size_in_bytes");
    auto [ptype, pvalue] = f.Get("partition");
    if (!ptype || ptype->type != avro::Type::kRecord ||
        pvalue->items.size() != m.partition_type.size()) {
      return Bad(f.context() + " has no partition of its manifest's shape");
    }
    for (size_t i = 0; i < m.partition_type.size(); i++) {
      const avro::Value& v = pvalue->items[i].Unwrapped();
      if (v.type == avro::Type::kNull) {
        d.partition.push_back(std::nullopt);
        continue;
      }
      auto literal = FromAvro(m.partition_type[i].type, v);
      if (!literal)
        return Bad(f.context() + ": partition " + m.partition_type[i].name + ": " +
                   literal.error().message);
      d.partition.push_back(std::move(*literal));
    }
    if (d.content == FileContent::kData && !d.first_row_id && next_row_id && e.Live()) {
      d.first_row_id = *next_row_id;
      *next_row_id += d.record_count;
    }
    m.entries.push_back(std::move(e));
  }
  return m;
}

}  // namespace tablemere::iceberg
