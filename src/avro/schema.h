// Avro schemas and values, as much of the Avro 1.11 specification as Iceberg's manifest
// lists and manifests use (every type but recursive named types, which Iceberg never
// writes).
//
// Hand-written because nothing packaged does it: Debian 12 has no Avro C++, and avro-c
// reads Iceberg's files but drops `field-id` (and `default`) when it writes a schema and
// has no API for the container's file metadata, both of which Iceberg readers need. The
// schema JSON is therefore kept verbatim (with every attribute Iceberg puts in it) and
// only parsed into nodes for encoding and decoding.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tablemere::avro {

enum class Type {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

const char* Name(Type t);

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Field {
  std::string name;
  NodePtr type;
  nlohmann::json attributes;  // the field's JSON (field-id, default, doc, …)
};

struct Node {
  Type type = Type::kNull;
  std::string name;                  // full name of a record, enum or fixed
  std::vector<Field> fields;         // record
  std::vector<std::string> symbols;  // enum
  NodePtr items;                     // array items, map values
  std::vector<NodePtr> branches;     // union
  size_t size = 0;                   // fixed
  std::string logical_type;          // e.g. "decimal", "date" ("" when none)
  int precision = 0, scale = 0;      // a decimal's

  // The index of the record field `name`, or -1.
  int FieldIndex(const std::string& field_name) const;
};

struct Schema {
  NodePtr root;
  nlohmann::json json;  // as given: written to a container's avro.schema unchanged
};

// Parses a schema (JSON). Errors: kInvalidInput naming what is wrong.
Result<Schema> ParseSchema(const nlohmann::json& json);
Result<Schema> ParseSchema(const std::string& text);

// A value of some schema node. Which members are meaningful depends on the node's type:
// boolean `b`; int and long `i`; float and double `d`; string, bytes and fixed `s`; enum
// `index` (the symbol's); union `index` (the branch's) and `items[0]` (its value); record
// `items` (one per field, in schema order); array `items`; map `entries`.
struct Value {
  Type type = Type::kNull;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  size_t index = 0;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> entries;

  static Value Null() { return Value{}; }
  static Value Bool(bool v);
  static Value Int(int32_t v);
  static Value Long(int64_t v);
  static Value Float(float v);
  static Value Double(double v);
  static Value String(std::string v);
  static Value Bytes(std::string v);
  static Value Fixed(std::string v);
  static Value Enum(size_t symbol);
  static Value Union(size_t branch, Value v);
  static Value Record(std::vector<Value> fields);
  static Value Array(std::vector<Value> items);
  static Value Map(std::vector<std::pair<std::string, Value>> entries);

  // A record's field by name (nullptr when the schema has no such field).
  const Value* Get(const Node& record, const std::string& field) const;
  // Through a union: the branch's value; any other value itself.
  const Value& Unwrapped() const { return type == Type::kUnion ? items.at(0) : *this; }
};

// The value as JSON, for inspection and tests: bytes and fixed as lowercase hex, a
// union as its branch's value, a record as an object, an enum as its symbol.
nlohmann::json ToJson(const Node& node, const Value& value);

// The inverse of ToJson: a value of `node` from its JSON. A record field missing from the
// object is null when its type admits null; a union takes null for null, otherwise the
// first branch the JSON fits. Errors: kInvalidInput naming the path that does not fit.
Result<Value> FromJson(const Node& node, const nlohmann::json& json);

}  // namespace tablemere::avro
