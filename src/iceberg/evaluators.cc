#include "iceberg/evaluators.h"

#include <algorithm>
#include <functional>

namespace tablemere::iceberg {
namespace {

using Json = nlohmann::json;

// Iceberg Java stops pruning `in` with this many literals.
constexpr size_t kInPredicateLimit = 200;

// Folds and/or over `leaf` (a rewritten filter has no not; one left is "might").
bool Holds(const ExpressionPtr& e, const std::function<bool(const Expression&)>& leaf) {
  switch (e->op) {
    case Op::kTrue:
      return true;
    case Op::kFalse:
      return false;
    case Op::kAnd:
      return Holds(e->left, leaf) && Holds(e->right, leaf);
    case Op::kOr:
      return Holds(e->left, leaf) || Holds(e->right, leaf);
    case Op::kNot:
      return true;
    default:
      return leaf(*e);
  }
}

bool Less(const Literal& a, const Literal& b) {
  return Compare(a, b) == std::partial_ordering::less;
}
bool Greater(const Literal& a, const Literal& b) {
  return Compare(a, b) == std::partial_ordering::greater;
}

bool StartsWith(const Literal& v, const Literal& prefix) {
  return v.AsBytes().starts_with(prefix.AsBytes());
}

// What is known of one column (or partition field) over a file (or manifest).
struct Stats {
  bool all_null = false, all_nan = false;
  bool may_have_null = true, may_have_nan = true;
  std::optional<Literal> lower, upper;
};

// Whether rows with these stats might satisfy predicate `p` (Iceberg's inclusive rules).
bool PredicateMightMatch(const Expression& p, const Stats& s) {
  switch (p.op) {
    case Op::kIsNull:
      return s.may_have_null;
    case Op::kNotNull:
      return !s.all_null;
    case Op::kIsNaN:
      return s.may_have_nan && !s.all_null;
    case Op::kNotNaN:
      return !s.all_nan;
    case Op::kNotEq:
    case Op::kNotIn:
      return true;
    case Op::kNotStartsWith:
      if (s.may_have_null || !s.lower || !s.upper) return true;
      return !(StartsWith(*s.lower, p.literals[0]) && StartsWith(*s.upper, p.literals[0]));
    default:
      break;
  }
  if (s.all_null || s.all_nan) return false;
  // A NaN bound says nothing about the others.
  const bool lower = s.lower && !s.lower->IsNaN(), upper = s.upper && !s.upper->IsNaN();
  const Literal* v = p.literals.empty() ? nullptr : &p.literals[0];
  switch (p.op) {
    case Op::kLt:
      return !(lower && !Less(*s.lower, *v));
    case Op::kLtEq:
      return !(lower && Greater(*s.lower, *v));
    case Op::kGt:
      return !(upper && !Greater(*s.upper, *v));
    case Op::kGtEq:
      return !(upper && Less(*s.upper, *v));
    case Op::kEq:
      return !((lower && Greater(*s.lower, *v)) || (upper && Less(*s.upper, *v)));
    case Op::kIn: {
      if (p.literals.size() > kInPredicateLimit) return true;
      return std::any_of(p.literals.begin(), p.literals.end(), [&](const Literal& l) {
        return !((lower && Greater(*s.lower, l)) || (upper && Less(*s.upper, l)));
      });
    }
    case Op::kStartsWith: {
      const std::string& prefix = v->AsBytes();
      if (lower) {
        Literal cut = *s.lower;
        cut.value = s.lower->AsBytes().substr(0, prefix.size());
        if (Greater(cut, *v)) return false;
      }
      if (upper) {
        Literal cut = *s.upper;
        cut.value = s.upper->AsBytes().substr(0, prefix.size());
        if (Less(cut, *v)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

// A predicate on one known value: nullopt when it cannot be told here (a NaN compared, or
// a negated test of null, which the reader decides).
std::optional<bool> Test(const Expression& p, const std::optional<Literal>& v) {
  if (!v) {
    switch (p.op) {
      case Op::kIsNull:
        return true;
      case Op::kNotNull:
        return false;
      case Op::kIsNaN:
        return false;
      case Op::kNotNaN:
        return true;
      case Op::kNotEq:
      case Op::kNotIn:
      case Op::kNotStartsWith:
        return std::nullopt;
      default:
        return false;
    }
  }
  if (v->IsNaN()) {
    switch (p.op) {
      case Op::kIsNaN:
        return true;
      case Op::kNotNaN:
        return false;
      case Op::kIsNull:
        return false;
      case Op::kNotNull:
        return true;
      default:
        return std::nullopt;
    }
  }
  auto cmp = [&](size_t i) { return Compare(*v, p.literals[i]); };
  switch (p.op) {
    case Op::kIsNull:
      return false;
    case Op::kNotNull:
      return true;
    case Op::kIsNaN:
      return false;
    case Op::kNotNaN:
      return true;
    case Op::kLt:
      return cmp(0) == std::partial_ordering::less;
    case Op::kLtEq:
      return cmp(0) == std::partial_ordering::less || cmp(0) == std::partial_ordering::equivalent;
    case Op::kGt:
      return cmp(0) == std::partial_ordering::greater;
    case Op::kGtEq:
      return cmp(0) == std::partial_ordering::greater ||
             cmp(0) == std::partial_ordering::equivalent;
    case Op::kEq:
      return cmp(0) == std::partial_ordering::equivalent;
    case Op::kNotEq:
      return cmp(0) != std::partial_ordering::equivalent;
    case Op::kStartsWith:
      return StartsWith(*v, p.literals[0]);
    case Op::kNotStartsWith:
      return !StartsWith(*v, p.literals[0]);
    case Op::kIn:
    case Op::kNotIn: {
      bool found = false;
      for (size_t i = 0; i < p.literals.size(); i++)
        found = found || cmp(i) == std::partial_ordering::equivalent;
      return p.op == Op::kIn ? found : !found;
    }
    default:
      return std::nullopt;
  }
}

ExpressionPtr Predicate(Op op, const SchemaField& field, std::vector<Literal> literals) {
  Expression e{op};
  e.column = field.name;
  e.field = field;
  e.literals = std::move(literals);
  return std::make_shared<Expression>(std::move(e));
}

// One predicate on a source column projected through one partition field (position `at`).
ExpressionPtr ProjectOne(const Expression& p, const PartitionSpecField& pf, int32_t at,
                         const PrimitiveType& source) {
  auto result = ResultType(pf.transform, source);
  if (!result) return Expression::True();
  const SchemaField target{at, pf.name, *result, false};
  const Transform& t = pf.transform;
  using K = Transform::Kind;
  if (p.op == Op::kIsNull || p.op == Op::kNotNull) {
    return t.PreservesNull() ? Predicate(p.op, target, {}) : Expression::True();
  }
  if (t.kind == K::kIdentity) return Predicate(p.op, target, p.literals);
  auto apply = [&](const Literal& l) { return Apply(t, l); };
  // A literal moved by one unit of its type (lt v is lt-eq v-1 on integers and times).
  auto step = [&](const Literal& l, int64_t by) -> std::optional<Literal> {
    Literal m = l;
    if (IsIntegral(l.type.id)) {
      m.value = l.AsInt() + by;
    } else if (l.type.id == TypeId::kDecimal) {
      m.value = l.AsUnscaled() + by;
    } else {
      return std::nullopt;
    }
    return m;
  };
  const bool temporal =
      t.kind == K::kYear || t.kind == K::kMonth || t.kind == K::kDay || t.kind == K::kHour;
  const bool ordered = temporal || (t.kind == K::kTruncate);
  auto bound = [&](Op op, const std::optional<Literal>& l) -> ExpressionPtr {
    if (!l) return Expression::True();
    auto projected = apply(*l);
    if (!projected) return Expression::True();
    // Writers before Iceberg 1.0 rounded times before 1970 towards zero: a partition one
    // above may hold them (Iceberg Java widens the same way).
    if (temporal && op == Op::kLtEq && projected->AsInt() < 0)
      projected->value = projected->AsInt() + 1;
    return Predicate(op, target, {*projected});
  };
  switch (p.op) {
    case Op::kEq:
    case Op::kIn: {
      if (t.kind != K::kBucket && !ordered) return Expression::True();
      std::vector<Literal> values;
      for (const auto& l : p.literals) {
        auto projected = apply(l);
        if (!projected) return Expression::True();
        values.push_back(*projected);
        if (temporal && projected->AsInt() < 0) {
          Literal above = *projected;
          above.value = projected->AsInt() + 1;
          values.push_back(above);
        }
      }
      if (values.size() == 1) return Predicate(Op::kEq, target, values);
      return Predicate(Op::kIn, target, values);
    }
    case Op::kLt:
    case Op::kLtEq:
    case Op::kGt:
    case Op::kGtEq: {
      if (!ordered) return Expression::True();
      const bool strings = IsBytes(source.id);
      const Literal& v = p.literals[0];
      if (p.op == Op::kLt)
        return bound(Op::kLtEq, strings ? std::optional<Literal>(v) : step(v, -1));
      if (p.op == Op::kLtEq) return bound(Op::kLtEq, v);
      if (p.op == Op::kGt)
        return bound(Op::kGtEq, strings ? std::optional<Literal>(v) : step(v, 1));
      return bound(Op::kGtEq, v);
    }
    case Op::kStartsWith: {
      if (t.kind != K::kTruncate || source.id != TypeId::kString) return Expression::True();
      const std::string& prefix = p.literals[0].AsBytes();
      size_t code_points = 0;
      for (unsigned char c : prefix) code_points += (c & 0xc0) != 0x80;
      if (code_points < static_cast<size_t>(t.param))
        return Predicate(Op::kStartsWith, target, p.literals);
      return bound(Op::kEq, p.literals[0]);
    }
    default:
      return Expression::True();
  }
}

}  // namespace

Result<PartitionSpec> ParsePartitionSpec(const Json& j) {
  PartitionSpec spec;
  if (!j.is_object() || !j.contains("fields") || !j["fields"].is_array()) {
    return Fail(ErrorCode::kInvalidInput, "a partition spec without fields");
  }
  spec.spec_id = j.value("spec-id", 0);
  for (const auto& f : j["fields"]) {
    if (!f.is_object() || !f.contains("source-id") || !f["source-id"].is_number_integer() ||
        !f.contains("transform") || !f["transform"].is_string()) {
      return Fail(ErrorCode::kInvalidInput, "a partition field needs a source-id and a transform");
    }
    spec.fields.push_back({f["source-id"].get<int32_t>(), f.value("field-id", 0),
                           f.value("name", ""),
                           Transform::Parse(f["transform"].get<std::string>())});
  }
  return spec;
}

bool MetricsMightMatch(const ExpressionPtr& filter, const DataFile& file) {
  if (file.record_count == 0) return false;
  if (file.record_count < 0) return true;  // v1 files written with -1: nothing known
  return Holds(filter, [&](const Expression& p) {
    const int32_t id = p.field->id;
    auto count = [&](const std::map<int32_t, int64_t>& m) -> std::optional<int64_t> {
      auto it = m.find(id);
      return it == m.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    auto values = count(file.value_counts), nulls = count(file.null_value_counts),
         nans = count(file.nan_value_counts);
    Stats s;
    s.all_null = values && nulls && *values - *nulls == 0;
    s.all_nan = values && nans && *nans == *values;
    s.may_have_null = !nulls || *nulls > 0;
    s.may_have_nan = !nans || *nans > 0;
    auto bound = [&](const std::map<int32_t, std::string>& m) -> std::optional<Literal> {
      auto it = m.find(id);
      if (it == m.end()) return std::nullopt;
      auto l = FromBound(p.field->type, it->second);
      return l ? std::optional<Literal>(std::move(*l)) : std::nullopt;
    };
    s.lower = bound(file.lower_bounds);
    s.upper = bound(file.upper_bounds);
    return PredicateMightMatch(p, s);
  });
}

ExpressionPtr ProjectInclusive(const ExpressionPtr& filter, const PartitionSpec& spec,
                               const std::vector<SchemaField>& fields) {
  switch (filter->op) {
    case Op::kTrue:
    case Op::kFalse:
      return filter;
    case Op::kAnd:
      return Expression::And(ProjectInclusive(filter->left, spec, fields),
                             ProjectInclusive(filter->right, spec, fields));
    case Op::kOr:
      return Expression::Or(ProjectInclusive(filter->left, spec, fields),
                            ProjectInclusive(filter->right, spec, fields));
    case Op::kNot:
      return Expression::True();
    default:
      break;
  }
  ExpressionPtr out = Expression::True();
  for (size_t i = 0; i < spec.fields.size(); i++) {
    const auto& pf = spec.fields[i];
    if (pf.source_id != filter->field->id) continue;
    out =
        Expression::And(out, ProjectOne(*filter, pf, static_cast<int32_t>(i), filter->field->type));
  }
  return out;
}

bool SummariesMightMatch(const ExpressionPtr& projected, const std::vector<FieldSummary>& summaries,
                         const std::vector<PartitionField>& types) {
  return Holds(projected, [&](const Expression& p) {
    const auto at = static_cast<size_t>(p.field->id);
    if (at >= summaries.size() || at >= types.size()) return true;
    const FieldSummary& f = summaries[at];
    const PrimitiveType& type = types[at].type;
    Stats s;
    auto decode = [&](const std::optional<std::string>& b) -> std::optional<Literal> {
      if (!b) return std::nullopt;
      auto l = FromBound(type, *b);
      return l ? std::optional<Literal>(std::move(*l)) : std::nullopt;
    };
    s.lower = decode(f.lower_bound);
    s.upper = decode(f.upper_bound);
    s.may_have_null = f.contains_null;
    s.may_have_nan = f.contains_nan.value_or(true);
    // No lower bound: every value is null or NaN (or the manifest is empty).
    const bool no_values = !f.lower_bound;
    s.all_null = no_values && f.contains_null && !(IsFloating(type.id) && s.may_have_nan);
    s.all_nan = no_values && !f.contains_null && f.contains_nan.value_or(false);
    if (no_values && !f.contains_null && !f.contains_nan.value_or(IsFloating(type.id))) {
      return false;  // no value at all
    }
    return PredicateMightMatch(p, s);
  });
}

bool PartitionMightMatch(const ExpressionPtr& projected,
                         const std::vector<std::optional<Literal>>& partition) {
  return Holds(projected, [&](const Expression& p) {
    const auto at = static_cast<size_t>(p.field->id);
    if (at >= partition.size()) return true;
    return Test(p, partition[at]).value_or(true);
  });
}

ExpressionPtr Residual(const ExpressionPtr& filter, const PartitionSpec& spec,
                       const std::vector<std::optional<Literal>>& partition) {
  switch (filter->op) {
    case Op::kTrue:
    case Op::kFalse:
    case Op::kNot:
      return filter;
    case Op::kAnd:
      return Expression::And(Residual(filter->left, spec, partition),
                             Residual(filter->right, spec, partition));
    case Op::kOr:
      return Expression::Or(Residual(filter->left, spec, partition),
                            Residual(filter->right, spec, partition));
    default:
      break;
  }
  for (size_t i = 0; i < spec.fields.size() && i < partition.size(); i++) {
    const auto& pf = spec.fields[i];
    if (pf.source_id != filter->field->id) continue;
    if (pf.transform.kind == Transform::Kind::kIdentity) {
      auto decided = Test(*filter, partition[i]);
      if (decided) return *decided ? Expression::True() : Expression::False();
      continue;
    }
    // Another transform can only rule a partition out.
    auto projected = ProjectOne(*filter, pf, static_cast<int32_t>(i), filter->field->type);
    if (!PartitionMightMatch(projected, partition)) return Expression::False();
  }
  return filter;
}

}  // namespace tablemere::iceberg
