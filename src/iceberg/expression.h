// Iceberg's row filter expressions, as the REST spec writes them (`Expression` JSON: and,
// or, not, comparisons, in and not-in, null and NaN tests, starts-with), parsed, bound
// to a table schema (literals converted to the column's type) and written back as JSON
// for residual filters. Pure; the evaluators are in evaluators.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "iceberg/literal.h"

namespace tablemere::iceberg {

enum class Op {
  kTrue,
  kFalse,
  kAnd,
  kOr,
  kNot,
  kIsNull,
  kNotNull,
  kIsNaN,
  kNotNaN,
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kEq,
  kNotEq,
  kStartsWith,
  kNotStartsWith,
  kIn,
  kNotIn,
};

const char* Name(Op op);
// The predicate that holds exactly where `op` does not (lt -> gt-eq, in -> not-in, …);
// and/or/not/true/false are negated by the caller.
Op Negated(Op op);

// A leaf column of a schema a filter may name: a primitive reached through structs only
// (the elements of lists and maps have no per-file metrics to prune with).
struct SchemaField {
  int32_t id = 0;
  std::string name;  // dotted from the root: "address.city"
  PrimitiveType type;
  bool required = false;
};

// The leaf columns of an Iceberg schema (its JSON). Errors: kInvalidInput for a schema of
// the wrong shape.
Result<std::vector<SchemaField>> FlattenSchema(const nlohmann::json& schema);

struct Expression;
using ExpressionPtr = std::shared_ptr<const Expression>;

// An expression. Before binding, a predicate names its column (`column`) and holds its
// literals as the JSON they came in; after binding, it names the field (`field`) and
// holds literals of the field's type.
struct Expression {
  Op op = Op::kTrue;
  ExpressionPtr left, right;  // and, or; not has `left` only
  std::string column;
  std::optional<SchemaField> field;
  std::vector<nlohmann::json> raw;
  std::vector<Literal> literals;

  bool IsPredicate() const { return op >= Op::kIsNull; }
  static ExpressionPtr True();
  static ExpressionPtr False();
  static ExpressionPtr And(ExpressionPtr a, ExpressionPtr b);  // simplified: true/false fold
  static ExpressionPtr Or(ExpressionPtr a, ExpressionPtr b);
  static ExpressionPtr Not(ExpressionPtr a);
};

// Parses the REST spec's Expression JSON (or a bare true/false, as Iceberg Java writes
// them). Errors: kInvalidInput naming what is wrong. Transform terms are refused (no
// client sends them in a scan filter).
Result<ExpressionPtr> ParseExpression(const nlohmann::json& json);

// Binds `e` to `fields`: each column found by name (case-insensitively unless
// `case_sensitive`), each literal converted to its type (a number to a date is refused; a
// long out of an int's range makes lt/gt always or never true, as Iceberg Java binds).
// Errors: kInvalidInput naming the unknown column or the literal that does not fit.
Result<ExpressionPtr> Bind(const ExpressionPtr& e, const std::vector<SchemaField>& fields,
                           bool case_sensitive);

// Pushes every not down to the predicates (not(a and b) -> not a or not b; not(lt) ->
// gt-eq), so evaluators see no not.
ExpressionPtr RewriteNot(const ExpressionPtr& e);

// A bound expression as the REST spec's JSON (dates, timestamps, decimals and uuids as
// strings; binary and fixed as hex), as residual filters are sent.
nlohmann::json ToJson(const ExpressionPtr& e);

// A literal as the REST spec's JSON value, and a JSON value as a literal of `type`.
nlohmann::json ToJson(const Literal& l);
Result<Literal> LiteralFromJson(const PrimitiveType& type, const nlohmann::json& v);

}  // namespace tablemere::iceberg
