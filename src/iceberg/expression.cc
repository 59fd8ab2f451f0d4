#include "iceberg/expression.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::iceberg {
namespace {

using Json = nlohmann::json;

std::unexpected<Error> Bad(std::string message) {
  return Fail(ErrorCode::kInvalidInput, std::move(message));
}

struct OpName {
  Op op;
  const char* name;
};
constexpr OpName kOps[] = {
    {Op::kTrue, "true"},
    {Op::kFalse, "false"},
    {Op::kAnd, "and"},
    {Op::kOr, "or"},
    {Op::kNot, "not"},
    {Op::kIsNull, "is-null"},
    {Op::kNotNull, "not-null"},
    {Op::kIsNaN, "is-nan"},
    {Op::kNotNaN, "not-nan"},
    {Op::kLt, "lt"},
    {Op::kLtEq, "lt-eq"},
    {Op::kGt, "gt"},
    {Op::kGtEq, "gt-eq"},
    {Op::kEq, "eq"},
    {Op::kNotEq, "not-eq"},
    {Op::kStartsWith, "starts-with"},
    {Op::kNotStartsWith, "not-starts-with"},
    {Op::kIn, "in"},
    {Op::kNotIn, "not-in"},
};

bool Unary(Op op) { return op >= Op::kIsNull && op <= Op::kNotNaN; }
bool SetOp(Op op) { return op == Op::kIn || op == Op::kNotIn; }

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses `digits` digits of `s` from `at` as a number, or -1.
int64_t Digits(const std::string& s, size_t at, size_t digits) {
  if (at + digits > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = at; i < at + digits; i++) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

Result<int64_t> DaysOf(const std::string& s) {
  // YYYY-MM-DD (a year before 1 or after 9999 is not written this way)
  int64_t y = Digits(s, 0, 4), m = Digits(s, 5, 2), d = Digits(s, 8, 2);
  if (s.size() < 10 || y < 0 || m < 1 || d < 1 || s[4] != '-' || s[7] != '-') {
    return Bad("not a date: " + s);
  }
  std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(y)},
                                  std::chrono::month{static_cast<unsigned>(m)},
                                  std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return Bad("not a date: " + s);
  return static_cast<int64_t>(std::chrono::sys_days{ymd}.time_since_epoch().count());
}

// HH:MM[:SS[.fraction]] from `at` as units of 10^-`digits` s; `end` is where it stopped.
Result<int64_t> TimeOf(const std::string& s, size_t at, int digits, size_t& end) {
  int64_t h = Digits(s, at, 2), m = Digits(s, at + 3, 2);
  if (h < 0 || h > 23 || m < 0 || m > 59 || s.size() < at + 5 || s[at + 2] != ':') {
    return Bad("not a time: " + s);
  }
  int64_t sec = 0, fraction = 0;
  end = at + 5;
  if (end < s.size() && s[end] == ':') {
    sec = Digits(s, end + 1, 2);
    if (sec < 0 || sec > 59) return Bad("not a time: " + s);
    end += 3;
    if (end < s.size() && s[end] == '.') {
      end++;
      int n = 0;
      while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) {
        if (n < digits)
          fraction = fraction * 10 + (s[end] - '0');
        else if (s[end] != '0')
          return Bad("more precision than the type has: " + s);
        n++;
        end++;
      }
      if (n == 0) return Bad("not a time: " + s);
      for (; n < digits; n++) fraction *= 10;
    }
  }
  int64_t unit = 1;
  for (int i = 0; i < digits; i++) unit *= 10;
  return ((h * 60 + m) * 60 + sec) * unit + fraction;
}

// YYYY-MM-DDTHH:MM:SS[.f][Z|±HH:MM] as units of 10^-`digits` s since the epoch (an offset
// moves it to UTC).
Result<int64_t> TimestampOf(const std::string& s, int digits) {
  TM_ASSIGN(int64_t days, DaysOf(s));
  if (s.size() < 11 || (s[10] != 'T' && s[10] != ' ')) return Bad("not a timestamp: " + s);
  size_t end = 0;
  TM_ASSIGN(int64_t in_day, TimeOf(s, 11, digits, end));
  int64_t unit = 1;
  for (int i = 0; i < digits; i++) unit *= 10;
  int64_t v = days * 86400 * unit + in_day;
  if (end == s.size()) return v;
  if (s[end] == 'Z' && end + 1 == s.size()) return v;
  if ((s[end] == '+' || s[end] == '-') && end + 6 == s.size() && s[end + 3] == ':') {
    int64_t oh = Digits(s, end + 1, 2), om = Digits(s, end + 4, 2);
    if (oh >= 0 && om >= 0) {
      int64_t offset = (oh * 60 + om) * 60 * unit;
      return s[end] == '+' ? v - offset : v + offset;
    }
  }
  return Bad("not a timestamp: " + s);
}

// "-12.30" as the unscaled value at `scale`; more non-zero decimals than that are refused,
// or, with `round`, rounded half up (as Iceberg Java binds a number to a decimal column).
Result<Int128> UnscaledOf(const std::string& s, int scale, bool round = false) {
  size_t at = 0;
  bool negative = false;
  if (at < s.size() && (s[at] == '-' || s[at] == '+')) negative = s[at++] == '-';
  Int128 v = 0;
  int decimals = -1, digits = 0;
  bool round_up = false, past_scale = false;
  for (; at < s.size(); at++) {
    char c = s[at];
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return Bad("not a decimal: " + s);
    if (decimals >= scale) {
      if (round) {
        if (!past_scale) round_up = c >= '5';
        past_scale = true;
        continue;
      }
      if (c != '0') return Bad("more decimals than the column's scale: " + s);
      continue;
    }
    if (++digits > 38) return Bad("too many digits for a decimal: " + s);
    v = v * 10 + (c - '0');
    if (decimals >= 0) decimals++;
  }
  if (digits == 0) return Bad("not a decimal: " + s);
  for (int d = std::max(decimals, 0); d < scale; d++) v *= 10;
  if (round_up) v += 1;  // half up: away from zero
  return negative ? -v : v;
}

std::string Pad(int64_t v, int width) {
  std::string s = std::to_string(v);
  return std::string(s.size() < static_cast<size_t>(width) ? width - s.size() : 0, '0') + s;
}

// Floor division and modulo (timestamps before 1970 are negative).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string TimeText(int64_t in_day, int digits) {
  int64_t unit = 1;
  for (int i = 0; i < digits; i++) unit *= 10;
  int64_t sec = in_day / unit, fraction = in_day % unit;
  return Pad(sec / 3600, 2) + ":" + Pad(sec / 60 % 60, 2) + ":" + Pad(sec % 60, 2) + "." +
         Pad(fraction, digits);
}

}  // namespace

const char* Name(Op op) {
  for (const auto& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}

Op Negated(Op op) {
  switch (op) {
    case Op::kIsNull:
      return Op::kNotNull;
    case Op::kNotNull:
      return Op::kIsNull;
    case Op::kIsNaN:
      return Op::kNotNaN;
    case Op::kNotNaN:
      return Op::kIsNaN;
    case Op::kLt:
      return Op::kGtEq;
    case Op::kLtEq:
      return Op::kGt;
    case Op::kGt:
      return Op::kLtEq;
    case Op::kGtEq:
      return Op::kLt;
    case Op::kEq:
      return Op::kNotEq;
    case Op::kNotEq:
      return Op::kEq;
    case Op::kStartsWith:
      return Op::kNotStartsWith;
    case Op::kNotStartsWith:
      return Op::kStartsWith;
    case Op::kIn:
      return Op::kNotIn;
    case Op::kNotIn:
      return Op::kIn;
    case Op::kTrue:
      return Op::kFalse;
    case Op::kFalse:
      return Op::kTrue;
    default:
      return op;
  }
}

Result<std::vector<SchemaField>> FlattenSchema(const Json& schema) {
  std::vector<SchemaField> out;
  std::function<Result<void>(const Json&, const std::string&, int)> walk =
      [&](const Json& s, const std::string& prefix, int depth) -> Result<void> {
    if (depth > 64) return Bad("a schema nested too deeply");
    auto fields = s.find("fields");
    if (fields == s.end() || !fields->is_array()) return Bad("a struct without fields");
    for (const auto& f : *fields) {
      if (!f.is_object() || !f.contains("id") || !f["id"].is_number_integer() ||
          !f.contains("name") || !f["name"].is_string() || !f.contains("type")) {
        return Bad("a schema field needs an id, a name and a type");
      }
      const std::string name = prefix + f["name"].get<std::string>();
      const Json& type = f["type"];
      if (type.is_object()) {
        if (type.value("type", "") == "struct") TM_TRY(walk(type, name + ".", depth + 1));
        continue;  // lists and maps: no metrics to prune with
      }
      if (!type.is_string()) return Bad("field " + name + " has no type");
      auto primitive = PrimitiveType::Parse(type.get<std::string>());
      if (!primitive) continue;  // a type this planner does not know (variant, geometry, …)
      out.push_back({f["id"].get<int32_t>(), name, *primitive, f.value("required", false)});
    }
    return {};
  };
  TM_TRY(walk(schema, "", 0));
  return out;
}

ExpressionPtr Expression::True() {
  static const ExpressionPtr t = std::make_shared<Expression>(Expression{Op::kTrue});
  return t;
}
ExpressionPtr Expression::False() {
  static const ExpressionPtr f = std::make_shared<Expression>(Expression{Op::kFalse});
  return f;
}
ExpressionPtr Expression::And(ExpressionPtr a, ExpressionPtr b) {
  if (a->op == Op::kFalse || b->op == Op::kFalse) return False();
  if (a->op == Op::kTrue) return b;
  if (b->op == Op::kTrue) return a;
  Expression e{Op::kAnd};
  e.left = std::move(a);
  e.right = std::move(b);
  return std::make_shared<Expression>(std::move(e));
}
ExpressionPtr Expression::Or(ExpressionPtr a, ExpressionPtr b) {
  if (a->op == Op::kTrue || b->op == Op::kTrue) return True();
  if (a->op == Op::kFalse) return b;
  if (b->op == Op::kFalse) return a;
  Expression e{Op::kOr};
  e.left = std::move(a);
  e.right = std::move(b);
  return std::make_shared<Expression>(std::move(e));
}
ExpressionPtr Expression::Not(ExpressionPtr a) {
  if (a->op == Op::kTrue) return False();
  if (a->op == Op::kFalse) return True();
  Expression e{Op::kNot};
  e.left = std::move(a);
  return std::make_shared<Expression>(std::move(e));
}

Result<ExpressionPtr> ParseExpression(const Json& json) {
  std::function<Result<ExpressionPtr>(const Json&, int)> parse =
      [&](const Json& j, int depth) -> Result<ExpressionPtr> {
    if (depth > 256) return Bad("a filter nested too deeply");
    if (j.is_boolean()) return j.get<bool>() ? Expression::True() : Expression::False();
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      return Bad("a filter expression is an object with a type");
    }
    const std::string type = j["type"].get<std::string>();
    const OpName* found = nullptr;
    for (const auto& o : kOps) {
      if (type == o.name) found = &o;
    }
    if (!found) return Bad("unknown filter expression type: " + type);
    Expression e{found->op};
    switch (e.op) {
      case Op::kTrue:
        return Expression::True();
      case Op::kFalse:
        return Expression::False();
      case Op::kAnd:
      case Op::kOr: {
        if (!j.contains("left") || !j.contains("right")) {
          return Bad("a filter '" + type + "' needs left and right");
        }
        TM_ASSIGN(e.left, parse(j["left"], depth + 1));
        TM_ASSIGN(e.right, parse(j["right"], depth + 1));
        return std::make_shared<Expression>(std::move(e));
      }
      case Op::kNot: {
        if (!j.contains("child")) return Bad("a filter 'not' needs a child");
        TM_ASSIGN(e.left, parse(j["child"], depth + 1));
        return std::make_shared<Expression>(std::move(e));
      }
      default:
        break;
    }
    if (!j.contains("term")) return Bad("a filter '" + type + "' needs a term");
    const Json& term = j["term"];
    if (term.is_string()) {
      e.column = term.get<std::string>();
    } else if (term.is_object() && term.value("type", "") == "reference" && term.contains("term") &&
               term["term"].is_string()) {
      e.column = term["term"].get<std::string>();
    } else if (term.is_object() && term.value("type", "") == "transform") {
      return Bad("filters on a transform of a column are not supported");
    } else {
      return Bad("a filter term is a column name");
    }
    if (Unary(e.op)) return std::make_shared<Expression>(std::move(e));
    if (SetOp(e.op)) {
      if (!j.contains("values") || !j["values"].is_array()) {
        return Bad("a filter '" + type + "' needs values");
      }
      for (const auto& v : j["values"]) e.raw.push_back(v);
    } else {
      if (!j.contains("value")) return Bad("a filter '" + type + "' needs a value");
      e.raw.push_back(j["value"]);
    }
    return std::make_shared<Expression>(std::move(e));
  };
  return parse(json, 0);
}

Result<Literal> LiteralFromJson(const PrimitiveType& type, const Json& v) {
  auto wrong = [&]() { return Bad("the value " + v.dump() + " is not a " + type.Name()); };
  const TypeId id = type.id;
  if (id == TypeId::kBoolean) {
    if (!v.is_boolean()) return wrong();
    return Literal::Bool(v.get<bool>());
  }
  if (id == TypeId::kInt || id == TypeId::kLong) {
    if (!v.is_number_integer()) return wrong();
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return wrong();
    }
    return Literal::Of(id, v.get<int64_t>());
  }
  if (IsFloating(id)) {
    if (!v.is_number()) return wrong();
    double d = v.get<double>();
    if (id == TypeId::kFloat) d = static_cast<float>(d);
    return Literal::Floating(id, d);
  }
  if (id == TypeId::kDecimal) {
    // A string keeps its scale (more decimals than the column's are refused); a number is
    // rounded half up to the column's scale, as Iceberg Java binds one.
    if (!v.is_string() && !v.is_number()) return wrong();
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    TM_ASSIGN(Int128 unscaled, UnscaledOf(text, type.scale, v.is_number()));
    return Literal::Decimal(type.precision, type.scale, unscaled);
  }
  // Iceberg Java writes an unbound date, time or timestamp literal as the number it holds
  // (days; microseconds, which nanosecond columns take as microseconds too).
  if (v.is_number_integer() && IsIntegral(id)) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return wrong();
    }
    const int64_t n = v.get<int64_t>();
    if (id == TypeId::kDate) {
      if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
        return wrong();
      }
      return Literal::Of(id, n);
    }
    if (id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs) {
      if (n > std::numeric_limits<int64_t>::max() / 1000 ||
          n < std::numeric_limits<int64_t>::min() / 1000) {
        return wrong();
      }
      return Literal::Of(id, n * 1000);
    }
    return Literal::Of(id, n);
  }
  if (!v.is_string()) return wrong();
  const std::string s = v.get<std::string>();
  switch (id) {
    case TypeId::kDate: {
      TM_ASSIGN(int64_t days, DaysOf(s));
      if (s.size() != 10) return wrong();
      return Literal::Of(id, days);
    }
    case TypeId::kTime: {
      size_t end = 0;
      TM_ASSIGN(int64_t micros, TimeOf(s, 0, 6, end));
      if (end != s.size()) return wrong();
      return Literal::Of(id, micros);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      TM_ASSIGN(int64_t micros, TimestampOf(s, 6));
      return Literal::Of(id, micros);
    }
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      TM_ASSIGN(int64_t nanos, TimestampOf(s, 9));
      return Literal::Of(id, nanos);
    }
    case TypeId::kString:
      return Literal::Bytes(type, s);
    case TypeId::kUuid: {
      std::string hex;
      for (char c : s) {
        if (c != '-') hex.push_back(c);
      }
      auto raw = crypto::HexDecode(hex);
      if (hex.size() != 32 || !raw) return wrong();
      return Literal::Bytes(type, *raw);
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      auto raw = crypto::HexDecode(s);
      if (!raw) return wrong();
      if (id == TypeId::kFixed && raw->size() != static_cast<size_t>(type.length)) return wrong();
      return Literal::Bytes(type, *raw);
    }
    default:
      return wrong();
  }
}

Json ToJson(const Literal& l) {
  const TypeId id = l.type.id;
  switch (id) {
    case TypeId::kBoolean:
      return l.AsBool();
    case TypeId::kInt:
    case TypeId::kLong:
      return l.AsInt();
    case TypeId::kFloat:
    case TypeId::kDouble:
      return l.AsDouble();
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kUuid:
      return l.ToString();
    case TypeId::kString:
      return l.AsBytes();
    case TypeId::kTime:
      return TimeText(l.AsInt(), 6);
    case TypeId::kFixed:
    case TypeId::kBinary:
      return crypto::HexEncode(l.AsBytes());
    default: {  // timestamps
      const bool nanos = id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs;
      const int64_t unit = nanos ? 1'000'000'000 : 1'000'000;
      const int64_t days = FloorDiv(l.AsInt(), 86400 * unit);
      const int64_t in_day = l.AsInt() - days * 86400 * unit;
      std::string text =
          Literal::Of(TypeId::kDate, days).ToString() + "T" + TimeText(in_day, nanos ? 9 : 6);
      if (id == TypeId::kTimestampTz || id == TypeId::kTimestampTzNs) text += "+00:00";
      return text;
    }
  }
}

Result<ExpressionPtr> Bind(const ExpressionPtr& e, const std::vector<SchemaField>& fields,
                           bool case_sensitive) {
  if (!e->IsPredicate()) {
    if (e->op == Op::kTrue || e->op == Op::kFalse) return e;
    TM_ASSIGN(ExpressionPtr left, Bind(e->left, fields, case_sensitive));
    if (e->op == Op::kNot) return Expression::Not(left);
    TM_ASSIGN(ExpressionPtr right, Bind(e->right, fields, case_sensitive));
    return e->op == Op::kAnd ? Expression::And(left, right) : Expression::Or(left, right);
  }
  const SchemaField* field = nullptr;
  const std::string wanted = case_sensitive ? e->column : Lower(e->column);
  for (const auto& f : fields) {
    if ((case_sensitive ? f.name : Lower(f.name)) != wanted) continue;
    if (field) return Bad("the filter column '" + e->column + "' is ambiguous without case");
    field = &f;
  }
  if (!field) return Bad("the filter names no column of the table: '" + e->column + "'");
  Expression b{e->op};
  b.column = field->name;
  b.field = *field;
  const TypeId id = field->type.id;
  if ((e->op == Op::kIsNaN || e->op == Op::kNotNaN) && !IsFloating(id)) {
    return Bad("is-nan and not-nan test a float or double column, not '" + field->name + "' (" +
               field->type.Name() + ")");
  }
  if ((e->op == Op::kStartsWith || e->op == Op::kNotStartsWith) && id != TypeId::kString) {
    return Bad("starts-with tests a string column, not '" + field->name + "' (" +
               field->type.Name() + ")");
  }
  // A required column is never null.
  if (field->required && e->op == Op::kIsNull) return Expression::False();
  if (field->required && e->op == Op::kNotNull) return Expression::True();
  for (const auto& raw : e->raw) {
    // A long out of an int column's range: decided without the data, as Iceberg Java
    // binds it (lt 2^40 on an int is always true).
    if (id == TypeId::kInt && raw.is_number_integer() &&
        (raw.is_number_unsigned() ? raw.get<uint64_t>() > std::numeric_limits<int32_t>::max()
                                  : (raw.get<int64_t>() > std::numeric_limits<int32_t>::max() ||
                                     raw.get<int64_t>() < std::numeric_limits<int32_t>::min()))) {
      const bool above = raw.is_number_unsigned() || raw.get<int64_t>() > 0;
      switch (e->op) {
        case Op::kLt:
        case Op::kLtEq:
          return above ? Expression::True() : Expression::False();
        case Op::kGt:
        case Op::kGtEq:
          return above ? Expression::False() : Expression::True();
        case Op::kEq:
          return Expression::False();
        case Op::kNotEq:
          return Expression::True();
        default:
          continue;  // in / not-in: a value no row has
      }
    }
    auto literal = LiteralFromJson(field->type, raw);
    if (!literal) {
      return Bad("the filter on '" + field->name + "': " + literal.error().message);
    }
    if (literal->IsNaN()) {
      return Bad("the filter on '" + field->name + "' compares with NaN: use is-nan");
    }
    b.literals.push_back(std::move(*literal));
  }
  if (e->op == Op::kIn && b.literals.empty()) return Expression::False();
  if (e->op == Op::kNotIn && b.literals.empty()) return Expression::Not(Expression::False());
  return std::make_shared<Expression>(std::move(b));
}

ExpressionPtr RewriteNot(const ExpressionPtr& e) {
  switch (e->op) {
    case Op::kTrue:
    case Op::kFalse:
      return e;
    case Op::kAnd:
      return Expression::And(RewriteNot(e->left), RewriteNot(e->right));
    case Op::kOr:
      return Expression::Or(RewriteNot(e->left), RewriteNot(e->right));
    case Op::kNot: {
      const ExpressionPtr& c = e->left;
      switch (c->op) {
        case Op::kTrue:
          return Expression::False();
        case Op::kFalse:
          return Expression::True();
        case Op::kNot:
          return RewriteNot(c->left);
        case Op::kAnd:
          return Expression::Or(RewriteNot(Expression::Not(c->left)),
                                RewriteNot(Expression::Not(c->right)));
        case Op::kOr:
          return Expression::And(RewriteNot(Expression::Not(c->left)),
                                 RewriteNot(Expression::Not(c->right)));
        default: {
          Expression n = *c;
          n.op = Negated(c->op);
          return std::make_shared<Expression>(std::move(n));
        }
      }
    }
    default:
      return e;
  }
}

Json ToJson(const ExpressionPtr& e) {
  switch (e->op) {
    case Op::kTrue:
      return true;
    case Op::kFalse:
      return false;
    case Op::kAnd:
    case Op::kOr:
      return {{"type", Name(e->op)}, {"left", ToJson(e->left)}, {"right", ToJson(e->right)}};
    case Op::kNot:
      return {{"type", "not"}, {"child", ToJson(e->left)}};
    default:
      break;
  }
  Json j = {{"type", Name(e->op)}, {"term", e->column}};
  if (Unary(e->op)) return j;
  if (SetOp(e->op)) {
    Json values = Json::array();
    for (const auto& l : e->literals) values.push_back(ToJson(l));
    j["values"] = std::move(values);
  } else if (!e->literals.empty()) {
    j["value"] = ToJson(e->literals.front());
  } else if (!e->raw.empty()) {
    j["value"] = e->raw.front();
  }
  return j;
}

}  // namespace tablemere::iceberg
