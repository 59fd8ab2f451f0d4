#include "maintenance/compaction_budget.h"

#include <algorithm>

#include "catalog/catalog_support.h"

namespace tablemere::maintenance {
namespace {

constexpr char kName[] = "compaction_budget";
constexpr int64_t kHourMs = 3'600'000;
constexpr int kRounds = 20;  // compare-and-set rounds lost to other servers before giving up

// The shared value: the hour's window, what it has read, and the reservation if any.
struct State {
  int64_t window_ms = 0;
  int64_t used = 0;
  std::string holder;         // the run holding it, "" when nothing is reserved
  std::string holder_server;  // the server that run belongs to
  int64_t held = 0;
  int64_t held_until_ms = 0;
  int64_t version = 0;  // the shared value's, 0 when never set
};

// The shared value as of `now`; `void_others`: every reservation but `holder`'s is void.
Result<State> Load(metastore::SharedValueStore& values, int64_t now, const BudgetHolder& holder,
                   bool void_others) {
  TM_ASSIGN(auto found, values.Find(kName));
  State s;
  s.window_ms = now;
  if (!found) return s;
  s.version = found->version;
  const Json j = Json::parse(found->value, nullptr, false);
  if (j.is_object()) {
    s.window_ms = j.value("window_ms", now);
    s.used = j.value("used", int64_t{0});
    s.holder = j.value("holder", "");
    s.holder_server = j.value("holder_server", "");
    s.held = j.value("held", int64_t{0});
    s.held_until_ms = j.value("held_until_ms", int64_t{0});
  }
  // A new hour starts from nothing read (a reservation carries over with what it holds).
  if (now - s.window_ms >= kHourMs) {
    s.window_ms = now;
    s.used = 0;
  }
  // A reservation a killed earlier run of this server (or of the embedded server) left is
  // void, its reading forgotten (as its restart would have forgotten an in-memory budget);
  // one whose server did not renew it in time is void, and all it held counts as read.
  const bool earlier_run =
      s.holder != holder.run &&
      (void_others || (!holder.server.empty() && s.holder_server == holder.server));
  if (!s.holder.empty() && earlier_run) {
    s.holder.clear();
    s.holder_server.clear();
    s.held = 0;
  } else if (!s.holder.empty() && s.held_until_ms <= now) {
    s.used += s.held;
    s.holder.clear();
    s.holder_server.clear();
    s.held = 0;
  }
  return s;
}

Result<bool> Store(metastore::SharedValueStore& values, const State& s) {
  const Json j = {{"window_ms", s.window_ms}, {"used", s.used},
                  {"holder", s.holder},       {"holder_server", s.holder_server},
                  {"held", s.held},           {"held_until_ms", s.held_until_ms}};
  return values.CompareAndSet(kName, j.dump(), s.version);
}

Error Contended() {
  return Error{ErrorCode::kUnavailable,
               "the compaction budget kept changing under other servers; try again",
               {}};
}

}  // namespace

Result<std::optional<int64_t>> CompactionBudget::Reserve() {
  for (int round = 0; round < kRounds; round++) {
    const int64_t now = clock_.NowMillis();
    TM_ASSIGN(State s, Load(values_, now, holder_, sole_server_));
    if (!s.holder.empty() && s.holder != holder_.run) return std::optional<int64_t>();
    s.used += s.held;  // a reservation of ours left over (an earlier run failed to release)
    s.holder = holder_.run;
    s.holder_server = holder_.server;
    s.held = std::max<int64_t>(0, bytes_per_hour_ - s.used);
    s.held_until_ms = now + lease_ms_;
    TM_ASSIGN(bool set, Store(values_, s));
    if (set) return std::optional<int64_t>(s.held);
  }
  return Fail(Contended());
}

Result<void> CompactionBudget::Renew() {
  for (int round = 0; round < kRounds; round++) {
    const int64_t now = clock_.NowMillis();
    TM_ASSIGN(State s, Load(values_, now, holder_, sole_server_));
    if (s.holder != holder_.run) return {};  // ran out before this: it is void
    s.held_until_ms = now + lease_ms_;
    TM_ASSIGN(bool set, Store(values_, s));
    if (set) return {};
  }
  return Fail(Contended());
}

Result<void> CompactionBudget::Release(int64_t bytes_read) {
  for (int round = 0; round < kRounds; round++) {
    TM_ASSIGN(State s, Load(values_, clock_.NowMillis(), holder_, sole_server_));
    // Not ours any more (it ran out and was voided): what it held has been counted.
    if (s.holder != holder_.run) return {};
    s.used += bytes_read;
    s.holder.clear();
    s.holder_server.clear();
    s.held = 0;
    s.held_until_ms = 0;
    TM_ASSIGN(bool set, Store(values_, s));
    if (set) return {};
  }
  return Fail(Contended());
}

}  // namespace tablemere::maintenance
