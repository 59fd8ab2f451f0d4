// The SQL (SQLite and PostgreSQL) CatalogStore: namespaces and the entries (tables, views, generic
// tables) whose metadata pointers commits compare-and-swap.
#include <algorithm>
#include <tuple>

#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlCatalog final : public CatalogStore {
 public:
  explicit SqlCatalog(Scope scope) : s_(scope) {}

  Result<void> CreateNamespace(const Namespace& ns) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      auto r = Run(db, "INSERT INTO namespaces VALUES(?, ?, ?)",
                   {ns.warehouse_id, JoinNs(ns.levels), ns.properties_json});
      if (!r && r.error().code == ErrorCode::kConflict) {
        return Fail(ErrorCode::kAlreadyExists, "Namespace already exists");
      }
      return r;
    });
  }

  Result<Namespace> GetNamespace(const std::string& warehouse_id,
                                 const std::vector<std::string>& levels) override {
    return s_.Read([&](sql::Connection& db) -> Result<Namespace> {
      return GetNamespaceIn(db, warehouse_id, levels);
    });
  }

  Result<std::vector<Namespace>> ListNamespaces(const std::string& warehouse_id,
                                                const std::vector<std::string>& parent) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<Namespace>> {
      TM_ASSIGN(auto* st,
                db.Prepare("SELECT name, properties FROM namespaces WHERE warehouse_id = ? "
                           "ORDER BY name"));
      st->Bind({warehouse_id});
      std::vector<Namespace> out;
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        auto levels = SplitNs(st->Text(0));
        if (levels.size() != parent.size() + 1) continue;
        if (!std::equal(parent.begin(), parent.end(), levels.begin())) continue;
        out.push_back(Namespace{warehouse_id, levels, st->Text(1)});
      }
      return out;
    });
  }

  Result<void> UpdateNamespaceProperties(const std::string& warehouse_id,
                                         const std::vector<std::string>& levels,
                                         const std::string& properties_json) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db, "UPDATE namespaces SET properties = ? WHERE warehouse_id = ? AND name = ?",
                 {properties_json, warehouse_id, JoinNs(levels)}));
      if (db.Changes() == 0) return Fail(NotFound("namespace not found"));
      return {};
    });
  }

  Result<void> DropNamespace(const std::string& warehouse_id,
                             const std::vector<std::string>& levels) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      std::string name = JoinNs(levels);
      TM_TRY(GetNamespaceIn(db, warehouse_id, levels));
      TM_ASSIGN(
          auto* e,
          db.Prepare("SELECT 1 FROM entries WHERE warehouse_id = ? AND namespace = ? LIMIT 1"));
      TM_ASSIGN(bool has_entries, e->Bind({warehouse_id, name}).Step());
      e->Bind({});
      TM_ASSIGN(auto* c,
                db.Prepare("SELECT 1 FROM namespaces WHERE warehouse_id = ? AND name > ? AND "
                           "name < ? LIMIT 1"));
      TM_ASSIGN(bool has_children, c->Bind({warehouse_id, name + "\x1f", name + "\x20"}).Step());
      c->Bind({});
      if (has_entries || has_children) {
        return Fail(ErrorCode::kConflict, "Namespace is not empty");
      }
      return Run(db, "DELETE FROM namespaces WHERE warehouse_id = ? AND name = ?",
                 {warehouse_id, name});
    });
  }

  Result<TableEntry> GetEntry(const std::string& warehouse_id, const std::vector<std::string>& ns,
                              const std::string& name) override {
    return s_.Read([&](sql::Connection& db) { return GetEntryIn(db, warehouse_id, ns, name); });
  }

  Result<std::vector<TableEntry>> ListEntries(const std::string& warehouse_id,
                                              const std::vector<std::string>& ns,
                                              const std::string& kind) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<TableEntry>> {
      return sql::Query(db,
                        std::string(kEntrySelect) +
                            " WHERE warehouse_id = ? AND namespace = ? AND kind = ? ORDER BY name",
                        {warehouse_id, JoinNs(ns), kind},
                        [&](sql::Statement& st) { return EntryRow(st); });
    });
  }

  Result<TableEntry> GetEntryHead(const std::string& warehouse_id,
                                  const std::vector<std::string>& ns,
                                  const std::string& name) override {
    // loadTable's one read: memoised (the metadata text itself is cached by location).
    if (s_.InTransaction()) return ReadEntryHead(warehouse_id, ns, name);
    std::string key = MemoKey({warehouse_id, JoinNs(ns), name});
    return s_.core.entry_head_memo.Get(key, [&] { return ReadEntryHead(warehouse_id, ns, name); });
  }

  // Where the memos are exact, from them (often no read at all); elsewhere one joined read,
  // as exact as the two reads it replaces, shared by the reads of the same table queued
  // while another is in flight (coalesced_reads.h).
  Result<WarehouseAndHead> GetWarehouseAndHead(const WarehouseId& warehouse_id,
                                               const std::vector<std::string>& ns,
                                               const std::string& name) override {
    if (s_.InTransaction() || s_.core.pool->SoleWriter()) {
      TM_ASSIGN(Warehouse w, FindWarehouseIn(s_, warehouse_id));
      auto head = GetEntryHead(warehouse_id.str(), ns, name);
      if (head) return WarehouseAndHead{std::move(w), std::move(*head)};
      if (head.error().code != ErrorCode::kNotFound) return Fail(head.error());
      return WarehouseAndHead{std::move(w), std::nullopt};
    }
    static const std::string joined =
        "SELECT " + WarehouseColumns("w") +
        ", e.warehouse_id, e.namespace, e.name, e.kind, e.uuid, e.location, "
        "e.metadata_location, '', e.created_ms, e.updated_ms FROM warehouses w LEFT JOIN "
        "entries e ON e.warehouse_id = w.id AND e.namespace = ? AND e.name = ? WHERE w.id = ?";
    constexpr int kEntryAt = 9;  // the warehouse's nine columns come first
    const std::string key = MemoKey({warehouse_id.str(), JoinNs(ns), name});
    return s_.core.head_reads.Get(key, [&] {
      return s_.Read([&](sql::Connection& db) -> Result<WarehouseAndHead> {
        return One(db, joined, {JoinNs(ns), name, warehouse_id.str()}, "warehouse not found",
                   [&](sql::Statement& st) {
                     WarehouseAndHead out{WarehouseRow(st, 0), std::nullopt};
                     if (!st.IsNull(kEntryAt)) out.head = EntryRowAt(st, kEntryAt);
                     return out;
                   });
      });
    });
  }

  Result<TableEntry> ReadEntryHead(const std::string& warehouse_id,
                                   const std::vector<std::string>& ns, const std::string& name) {
    return s_.Read([&](sql::Connection& db) -> Result<TableEntry> {
      return OneEntry(db, kEntryHeadSelect, warehouse_id, ns, name);
    });
  }

  Result<std::vector<TableEntry>> ListEntriesOfKind(const std::string& warehouse_id,
                                                    const std::string& kind) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<TableEntry>> {
      return sql::Query(db,
                        std::string(kEntrySelect) +
                            " WHERE warehouse_id = ? AND kind = ? ORDER BY namespace, name",
                        {warehouse_id, kind}, [&](sql::Statement& st) { return EntryRow(st); });
    });
  }

  // A table commit: a kRows writer, so commits to other tables (on any replica) run beside
  // it. Each swap is exact by its own statement: an INSERT the entry's key refuses, or an
  // UPDATE conditional on the expected pointer (re-checked by PostgreSQL against a row
  // committed meanwhile). Rows are taken in key order, so two commits over the same
  // tables wait for one another instead of deadlocking. Namespaces change only under
  // kExclusive writers, so the one a create checks stays.
  Result<void> SwapMetadata(const std::vector<MetadataSwap>& swaps) override {
    std::vector<const MetadataSwap*> ordered;
    for (const MetadataSwap& s : swaps) ordered.push_back(&s);
    auto key = [](const MetadataSwap* s) {
      return std::tie(s->warehouse_id, s->namespace_levels, s->name);
    };
    std::sort(ordered.begin(), ordered.end(),
              [&](const MetadataSwap* a, const MetadataSwap* b) { return key(a) < key(b); });
    return s_.Write(
        [&](sql::Connection& db) -> Result<void> {
          for (const MetadataSwap* s : ordered) TM_TRY(SwapOne(db, *s));
          return {};
        },
        WriteLock::kRows);
  }

  Result<void> SwapOne(sql::Connection& db, const MetadataSwap& s) {
    const TableEntry& r = s.replacement;
    if (s.expected_metadata_location.empty()) {
      TM_TRY(GetNamespaceIn(db, s.warehouse_id, s.namespace_levels));
      TM_TRY(Run(db,
                 "INSERT INTO entries VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                 {r.warehouse_id, JoinNs(r.namespace_levels), r.name, r.kind, r.uuid, r.location,
                  r.metadata_location, r.metadata_json, r.created_ms, r.updated_ms}));
      if (db.Changes() == 1) return {};
      // Taken: by an entry of any kind, perhaps one a concurrent commit just created.
      TM_ASSIGN(TableEntry existing, GetEntryIn(db, s.warehouse_id, s.namespace_levels, s.name));
      return Fail(Error{ErrorCode::kAlreadyExists, "already exists", {}}.With("existing_kind",
                                                                              existing.kind));
    }
    TM_TRY(Run(db,
               "UPDATE entries SET metadata_location = ?, metadata = ?, location = ?, "
               "updated_ms = ? WHERE warehouse_id = ? AND namespace = ? AND name = ? AND "
               "metadata_location = ?",
               {r.metadata_location, r.metadata_json, r.location, r.updated_ms, s.warehouse_id,
                JoinNs(s.namespace_levels), s.name, s.expected_metadata_location}));
    if (db.Changes() == 1) return {};
    // Gone (kNotFound), or moved on from the pointer the commit was prepared against.
    TM_TRY(GetEntryIn(db, s.warehouse_id, s.namespace_levels, s.name));
    return Fail(StalePointer());
  }

  Result<TableEntry> DropEntry(const std::string& warehouse_id, const std::vector<std::string>& ns,
                               const std::string& name, const std::string& kind,
                               const DropFollowUp& follow_up) override {
    return s_.Write([&](sql::Connection& db) -> Result<TableEntry> {
      TM_ASSIGN(TableEntry e, GetEntryIn(db, warehouse_id, ns, name));
      if (e.kind != kind) return Fail(NotFound("no " + kind + " with that name"));
      TM_TRY(Run(db, "DELETE FROM entries WHERE warehouse_id = ? AND namespace = ? AND name = ?",
                 {warehouse_id, JoinNs(ns), name}));
      // Its maintenance state goes with it: a table created under the name later starts
      // with none, and no noncurrent record outlives the objects the purge deletes.
      for (const char* state : kMaintenanceState) {
        TM_TRY(Run(db,
                   std::string("DELETE FROM ") + state +
                       " WHERE warehouse_id = ? AND namespace = ? AND name = ?",
                   {warehouse_id, JoinNs(ns), name}));
      }
      if (follow_up) {
        TM_ASSIGN(std::optional<NewTask> task, follow_up(e));
        if (task) TM_TRY(InsertTask(db, s_.core.clock, *task));
      }
      return e;
    });
  }

  Result<int> DeleteWarehouseEntries(const std::string& warehouse_id) override {
    return s_.Write([&](sql::Connection& db) -> Result<int> {
      TM_ASSIGN(
          auto* st,
          db.Prepare("SELECT count(*) FROM entries WHERE warehouse_id = ? AND kind = 'table'"));
      TM_ASSIGN(bool row, st->Bind({warehouse_id}).Step());
      int tables = row ? static_cast<int>(st->Int(0)) : 0;
      st->Bind({});
      TM_TRY(Run(db, "DELETE FROM entries WHERE warehouse_id = ?", {warehouse_id}));
      TM_TRY(Run(db, "DELETE FROM namespaces WHERE warehouse_id = ?", {warehouse_id}));
      for (const char* state : kMaintenanceState) {
        TM_TRY(Run(db, std::string("DELETE FROM ") + state + " WHERE warehouse_id = ?",
                   {warehouse_id}));
      }
      return tables;
    });
  }

  Result<void> RenameEntry(const std::string& warehouse_id, const std::vector<std::string>& from_ns,
                           const std::string& from_name, const std::vector<std::string>& to_ns,
                           const std::string& to_name, const std::string& kind) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_ASSIGN(TableEntry e, GetEntryIn(db, warehouse_id, from_ns, from_name));
      if (e.kind != kind) return Fail(NotFound("no " + kind + " with that name"));
      TM_TRY(GetNamespaceIn(db, warehouse_id, to_ns));
      auto target = GetEntryIn(db, warehouse_id, to_ns, to_name);
      if (target) {
        return Fail(Error{ErrorCode::kAlreadyExists, "already exists", {}}.With("existing_kind",
                                                                                target->kind));
      }
      TM_TRY(Run(db,
                 "UPDATE entries SET namespace = ?, name = ?, updated_ms = ? WHERE "
                 "warehouse_id = ? AND namespace = ? AND name = ?",
                 {JoinNs(to_ns), to_name, s_.core.clock.NowMillis(), warehouse_id, JoinNs(from_ns),
                  from_name}));
      // Its maintenance state moves with it (the files stay where they are).
      for (const char* state : kMaintenanceState) {
        // Whatever stale state the new name held gives way to the table's own.
        TM_TRY(Run(db,
                   std::string("DELETE FROM ") + state +
                       " WHERE warehouse_id = ? AND namespace = ? AND name = ?",
                   {warehouse_id, JoinNs(to_ns), to_name}));
        TM_TRY(Run(db,
                   std::string("UPDATE ") + state +
                       " SET namespace = ?, name = ? WHERE warehouse_id = ? AND namespace = ? "
                       "AND name = ?",
                   {JoinNs(to_ns), to_name, warehouse_id, JoinNs(from_ns), from_name}));
      }
      return {};
    });
  }

 private:
  // The tables holding a table's maintenance state, keyed by (warehouse_id, namespace, name).
  static constexpr const char* kMaintenanceState[] = {"maintenance_runs", "noncurrent_objects"};
  static constexpr char kEntrySelect[] =
      "SELECT warehouse_id, namespace, name, kind, uuid, location, metadata_location, metadata, "
      "created_ms, updated_ms FROM entries";
  // The same columns without the metadata document (loadTable's cheap read).
  static constexpr char kEntryHeadSelect[] =
      "SELECT warehouse_id, namespace, name, kind, uuid, location, metadata_location, '', "
      "created_ms, updated_ms FROM entries";

  static TableEntry EntryRow(sql::Statement& st) { return EntryRowAt(st, 0); }
  // The entry from the columns at `first` on (kEntrySelect's order).
  static TableEntry EntryRowAt(sql::Statement& st, int first) {
    auto text = [&](int i) { return st.Text(first + i); };
    return TableEntry{text(0), SplitNs(text(1)), text(2), text(3),           text(4),
                      text(5), text(6),          text(7), st.Int(first + 8), st.Int(first + 9)};
  }

  static Result<Namespace> GetNamespaceIn(sql::Connection& db, const std::string& warehouse_id,
                                          const std::vector<std::string>& levels) {
    TM_ASSIGN(auto* st,
              db.Prepare("SELECT properties FROM namespaces WHERE warehouse_id = ? AND name = ?"));
    TM_ASSIGN(bool row, st->Bind({warehouse_id, JoinNs(levels)}).Step());
    if (!row) {
      return Fail(
          Error{ErrorCode::kNotFound, "Namespace does not exist: " + JoinDots(levels), {}}.With(
              "missing", "namespace"));
    }
    Namespace ns{warehouse_id, levels, st->Text(0)};
    st->Bind({});
    return ns;
  }

  static Result<TableEntry> GetEntryIn(sql::Connection& db, const std::string& warehouse_id,
                                       const std::vector<std::string>& ns,
                                       const std::string& name) {
    return OneEntry(db, kEntrySelect, warehouse_id, ns, name);
  }

  // The entry `select` reads (whole, or its head without the document).
  static Result<TableEntry> OneEntry(sql::Connection& db, const char* select,
                                     const std::string& warehouse_id,
                                     const std::vector<std::string>& ns, const std::string& name) {
    auto e = One(db, std::string(select) + " WHERE warehouse_id = ? AND namespace = ? AND name = ?",
                 {warehouse_id, JoinNs(ns), name}, "", EntryRow);
    if (!e && e.error().code == ErrorCode::kNotFound) {
      return Fail(Error{ErrorCode::kNotFound, "not found: " + JoinDots(ns) + "." + name, {}}.With(
          "missing", "entry"));
    }
    return e;
  }

  Scope s_;
};

}  // namespace

std::unique_ptr<CatalogStore> NewCatalogStore(Scope scope) {
  return std::make_unique<SqlCatalog>(scope);
}

}  // namespace tablemere::metastore::sql_backend
