#include "avro/schema.h"

#include <map>

namespace tablemere::avro {
namespace {

Error Bad(const std::string& what) {
  return Error{ErrorCode::kInvalidInput, "Avro schema: " + what, {}};
}

struct Parser {
  std::map<std::string, NodePtr> named;

  static std::string FullName(const nlohmann::json& j, const std::string& enclosing_ns) {
    // A name that is not a string is no name (value() would throw on it).
    std::string name =
        j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "";
    if (name.find('.') != std::string::npos) return name;
    std::string ns = j.contains("namespace") && j["namespace"].is_string()
                         ? j["namespace"].get<std::string>()
                         : enclosing_ns;
    return ns.empty() ? name : ns + "." + name;
  }

  static std::string NamespaceOf(const std::string& full) {
    size_t dot = full.rfind('.');
    return dot == std::string::npos ? "" : full.substr(0, dot);
  }

  Result<NodePtr> Parse(const nlohmann::json& j, const std::string& ns, int depth) {
    if (depth > 64) return Fail(Bad("nested too deeply"));
    if (j.is_array()) {
      auto node = std::make_shared<Node>();
      node->type = Type::kUnion;
      for (const auto& branch : j) {
        TM_ASSIGN(NodePtr b, Parse(branch, ns, depth + 1));
        if (b->type == Type::kUnion) return Fail(Bad("a union may not hold a union"));
        node->branches.push_back(b);
      }
      if (node->branches.empty()) return Fail(Bad("an empty union"));
      return NodePtr(node);
    }
    if (j.is_string()) return Primitive(j.get<std::string>(), ns);
    if (!j.is_object() || !j.contains("type")) return Fail(Bad("expected a type, got " + j.dump()));
    const nlohmann::json& t = j["type"];
    if (!t.is_string()) return Parse(t, ns, depth + 1);
    const std::string type = t.get<std::string>();
    auto node = std::make_shared<Node>();
    if (j.contains("logicalType") && j["logicalType"].is_string()) {
      node->logical_type = j["logicalType"].get<std::string>();
      for (auto [key, member] :
           {std::pair{"precision", &node->precision}, {"scale", &node->scale}}) {
        auto it = j.find(key);
        if (it != j.end() && it->is_number_integer()) *member = it->get<int>();
      }
    }
    if (type == "record" || type == "error") {
      node->type = Type::kRecord;
      node->name = FullName(j, ns);
      if (!j.contains("fields") || !j["fields"].is_array())
        return Fail(Bad("record without fields"));
      for (const auto& f : j["fields"]) {
        if (!f.is_object() || !f.contains("name") || !f["name"].is_string() ||
            !f.contains("type")) {
          return Fail(Bad("a record field needs a name and a type"));
        }
        TM_ASSIGN(NodePtr ft, Parse(f["type"], NamespaceOf(node->name), depth + 1));
        node->fields.push_back({f["name"].get<std::string>(), ft, f});
      }
    } else if (type == "enum") {
      node->type = Type::kEnum;
      node->name = FullName(j, ns);
      if (!j.contains("symbols") || !j["symbols"].is_array())
        return Fail(Bad("enum without symbols"));
      for (const auto& s : j["symbols"]) {
        if (!s.is_string()) return Fail(Bad("enum symbols are strings"));
        node->symbols.push_back(s.get<std::string>());
      }
    } else if (type == "fixed") {
      node->type = Type::kFixed;
      node->name = FullName(j, ns);
      if (!j.contains("size") || !j["size"].is_number_unsigned())
        return Fail(Bad("fixed without size"));
      node->size = j["size"].get<size_t>();
    } else if (type == "array") {
      node->type = Type::kArray;
      if (!j.contains("items")) return Fail(Bad("array without items"));
      TM_ASSIGN(node->items, Parse(j["items"], ns, depth + 1));
    } else if (type == "map") {
      node->type = Type::kMap;
      if (!j.contains("values")) return Fail(Bad("map without values"));
      TM_ASSIGN(node->items, Parse(j["values"], ns, depth + 1));
    } else {
      // A primitive written as an object ({"type": "long", "logicalType": …}).
      TM_ASSIGN(NodePtr p, Primitive(type, ns));
      if (node->logical_type.empty()) return p;
      auto copy = std::make_shared<Node>(*p);
      copy->logical_type = node->logical_type;
      copy->precision = node->precision;
      copy->scale = node->scale;
      return NodePtr(copy);
    }
    if (!node->name.empty()) {
      if (named.count(node->name)) return Fail(Bad("the name " + node->name + " is defined twice"));
      named[node->name] = node;
    }
    return NodePtr(node);
  }

  Result<NodePtr> Primitive(const std::string& name, const std::string& ns) {
    static const std::map<std::string, Type> kPrimitives = {
        {"null", Type::kNull},   {"boolean", Type::kBoolean}, {"int", Type::kInt},
        {"long", Type::kLong},   {"float", Type::kFloat},     {"double", Type::kDouble},
        {"bytes", Type::kBytes}, {"string", Type::kString}};
    auto p = kPrimitives.find(name);
    if (p != kPrimitives.end()) {
      auto node = std::make_shared<Node>();
      node->type = p->second;
      return NodePtr(node);
    }
    // A reference to a named type defined earlier.
    for (const std::string& candidate : {name, ns.empty() ? name : ns + "." + name}) {
      auto it = named.find(candidate);
      if (it != named.end()) return it->second;
    }
    return Fail(Bad("unknown type " + name));
  }
};

}  // namespace

const char* Name(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kRecord:
      return "record";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kUnion:
      return "union";
    case Type::kFixed:
      return "fixed";
  }
  return "?";
}

int Node::FieldIndex(const std::string& field_name) const {
  for (size_t i = 0; i < fields.size(); i++) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

Result<Schema> ParseSchema(const nlohmann::json& json) {
  Parser p;
  TM_ASSIGN(NodePtr root, p.Parse(json, "", 0));
  return Schema{root, json};
}

Result<Schema> ParseSchema(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Fail(Bad("not JSON"));
  return ParseSchema(j);
}

Value Value::Bool(bool v) {
  Value x;
  x.type = Type::kBoolean;
  x.b = v;
  return x;
}
Value Value::Int(int32_t v) {
  Value x;
  x.type = Type::kInt;
  x.i = v;
  return x;
}
Value Value::Long(int64_t v) {
  Value x;
  x.type = Type::kLong;
  x.i = v;
  return x;
}
Value Value::Float(float v) {
  Value x;
  x.type = Type::kFloat;
  x.d = v;
  return x;
}
Value Value::Double(double v) {
  Value x;
  x.type = Type::kDouble;
  x.d = v;
  return x;
}
Value Value::String(std::string v) {
  Value x;
  x.type = Type::kString;
  x.s = std::move(v);
  return x;
}
Value Value::Bytes(std::string v) {
  Value x;
  x.type = Type::kBytes;
  x.s = std::move(v);
  return x;
}
Value Value::Fixed(std::string v) {
  Value x;
  x.type = Type::kFixed;
  x.s = std::move(v);
  return x;
}
Value Value::Enum(size_t symbol) {
  Value x;
  x.type = Type::kEnum;
  x.index = symbol;
  return x;
}
Value Value::Union(size_t branch, Value v) {
  Value x;
  x.type = Type::kUnion;
  x.index = branch;
  x.items.push_back(std::move(v));
  return x;
}
Value Value::Record(std::vector<Value> fields) {
  Value x;
  x.type = Type::kRecord;
  x.items = std::move(fields);
  return x;
}
Value Value::Array(std::vector<Value> items) {
  Value x;
  x.type = Type::kArray;
  x.items = std::move(items);
  return x;
}
Value Value::Map(std::vector<std::pair<std::string, Value>> entries) {
  Value x;
  x.type = Type::kMap;
  x.entries = std::move(entries);
  return x;
}

const Value* Value::Get(const Node& record, const std::string& field) const {
  int i = record.FieldIndex(field);
  if (i < 0 || static_cast<size_t>(i) >= items.size()) return nullptr;
  return &items[static_cast<size_t>(i)];
}

nlohmann::json ToJson(const Node& node, const Value& value) {
  static const char* kHex = "0123456789abcdef";
  auto hex = [](const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    return out;
  };
  switch (node.type) {
    case Type::kNull:
      return nullptr;
    case Type::kBoolean:
      return value.b;
    case Type::kInt:
    case Type::kLong:
      return value.i;
    case Type::kFloat:
    case Type::kDouble:
      return value.d;
    case Type::kString:
      return value.s;
    case Type::kBytes:
    case Type::kFixed:
      return hex(value.s);
    case Type::kEnum:
      return node.symbols.at(value.index);
    case Type::kUnion:
      return ToJson(*node.branches.at(value.index), value.items.at(0));
    case Type::kArray: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& item : value.items) a.push_back(ToJson(*node.items, item));
      return a;
    }
    case Type::kMap: {
      nlohmann::json m = nlohmann::json::object();
      for (const auto& [k, v] : value.entries) m[k] = ToJson(*node.items, v);
      return m;
    }
    case Type::kRecord: {
      nlohmann::json r = nlohmann::json::object();
      for (size_t i = 0; i < node.fields.size() && i < value.items.size(); i++) {
        r[node.fields[i].name] = ToJson(*node.fields[i].type, value.items[i]);
      }
      return r;
    }
  }
  return nullptr;
}

}  // namespace tablemere::avro

namespace tablemere::avro {
namespace {

Result<Value> FromJsonAt(const Node& node, const nlohmann::json& j, const std::string& path,
                         int depth) {
  auto wrong = [&]() {
    return Fail(Error{ErrorCode::kInvalidInput,
                      "Avro value at " + (path.empty() ? std::string("the root") : path) + ": " +
                          j.dump() + " is not a " + Name(node.type),
                      {}});
  };
  if (depth > 64) return wrong();
  switch (node.type) {
    case Type::kNull:
      if (!j.is_null()) return wrong();
      return Value::Null();
    case Type::kBoolean:
      if (!j.is_boolean()) return wrong();
      return Value::Bool(j.get<bool>());
    case Type::kInt:
    case Type::kLong: {
      if (!j.is_number_integer()) return wrong();
      int64_t v = j.get<int64_t>();
      if (node.type == Type::kInt && (v < INT32_MIN || v > INT32_MAX)) return wrong();
      Value out = Value::Long(v);
      out.type = node.type;
      return out;
    }
    case Type::kFloat:
    case Type::kDouble: {
      if (!j.is_number()) return wrong();
      Value out = Value::Double(j.get<double>());
      out.type = node.type;
      return out;
    }
    case Type::kString:
      if (!j.is_string()) return wrong();
      return Value::String(j.get<std::string>());
    case Type::kBytes:
    case Type::kFixed: {
      if (!j.is_string()) return wrong();
      const std::string hex = j.get<std::string>();
      if (hex.size() % 2 != 0) return wrong();
      std::string bytes;
      for (size_t i = 0; i < hex.size(); i += 2) {
        auto nibble = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
        if (hi < 0 || lo < 0) return wrong();
        bytes += static_cast<char>(hi * 16 + lo);
      }
      if (node.type == Type::kFixed && bytes.size() != node.size) return wrong();
      return node.type == Type::kFixed ? Value::Fixed(std::move(bytes))
                                       : Value::Bytes(std::move(bytes));
    }
    case Type::kEnum: {
      if (!j.is_string()) return wrong();
      for (size_t i = 0; i < node.symbols.size(); i++) {
        if (node.symbols[i] == j.get<std::string>()) return Value::Enum(i);
      }
      return wrong();
    }
    case Type::kUnion:
      for (size_t b = 0; b < node.branches.size(); b++) {
        if (j.is_null() != (node.branches[b]->type == Type::kNull)) continue;
        auto v = FromJsonAt(*node.branches[b], j, path, depth + 1);
        if (v) return Value::Union(b, std::move(*v));
      }
      return wrong();
    case Type::kArray: {
      if (!j.is_array()) return wrong();
      std::vector<Value> items;
      for (size_t i = 0; i < j.size(); i++) {
        TM_ASSIGN(Value v,
                  FromJsonAt(*node.items, j[i], path + "[" + std::to_string(i) + "]", depth + 1));
        items.push_back(std::move(v));
      }
      return Value::Array(std::move(items));
    }
    case Type::kMap: {
      if (!j.is_object()) return wrong();
      std::vector<std::pair<std::string, Value>> entries;
      for (const auto& [k, item] : j.items()) {
        TM_ASSIGN(Value v, FromJsonAt(*node.items, item, path + "." + k, depth + 1));
        entries.emplace_back(k, std::move(v));
      }
      return Value::Map(std::move(entries));
    }
    case Type::kRecord: {
      if (!j.is_object()) return wrong();
      std::vector<Value> fields;
      for (const auto& f : node.fields) {
        const std::string at = path.empty() ? f.name : path + "." + f.name;
        auto it = j.find(f.name);
        TM_ASSIGN(Value v,
                  FromJsonAt(*f.type, it == j.end() ? nlohmann::json() : *it, at, depth + 1));
        fields.push_back(std::move(v));
      }
      return Value::Record(std::move(fields));
    }
  }
  return wrong();
}

}  // namespace

Result<Value> FromJson(const Node& node, const nlohmann::json& json) {
  return FromJsonAt(node, json, "", 0);
}

}  // namespace tablemere::avro
