#include "catalog/commit_loop.h"

namespace tablemere::catalog {

namespace {

// One attempt: writes the changed documents and swaps their pointers together. The
// locations written go to `written` as they are, so a failure at any step can delete
// exactly those.
Result<std::vector<PublishedMetadata>> Publish(metastore::CatalogStore& store,
                                               WarehouseFiles& files, const metastore::Warehouse& w,
                                               std::vector<EntryChange> changes,
                                               std::vector<std::string>& written) {
  std::vector<metastore::MetadataSwap> swaps;
  std::vector<PublishedMetadata> published;
  for (EntryChange& c : changes) {
    if (!c.changed) {
      std::string text = c.next.dump();
      published.push_back(
          PublishedMetadata{c.expected_metadata_location, std::move(text), std::move(c.next)});
      continue;
    }
    int version =
        c.expected_metadata_location.empty() ? 0 : VersionOf(c.expected_metadata_location) + 1;
    TM_ASSIGN(std::string location,
              files.WriteMetadata(w, c.replacement.location, version, c.next));
    written.push_back(location);
    c.replacement.metadata_location = location;
    c.replacement.metadata_json = c.next.dump();
    published.push_back(
        PublishedMetadata{location, c.replacement.metadata_json, std::move(c.next)});
    metastore::MetadataSwap swap;
    swap.warehouse_id = c.replacement.warehouse_id;
    swap.namespace_levels = c.replacement.namespace_levels;
    swap.name = c.replacement.name;
    swap.expected_metadata_location = std::move(c.expected_metadata_location);
    swap.replacement = std::move(c.replacement);
    swaps.push_back(std::move(swap));
  }
  if (swaps.empty()) return published;
  auto swapped = store.SwapMetadata(swaps);
  if (!swapped) {
    // A create that lost its race to another create is a lost race too: prepared again,
    // the retry answers in the words of whatever now holds the name.
    if (swapped.error().code == ErrorCode::kAlreadyExists) return Fail(metastore::StalePointer());
    return Fail(swapped.error());
  }
  return published;
}

}  // namespace

Result<std::vector<PublishedMetadata>> CommitOptimistically(metastore::CatalogStore& store,
                                                            WarehouseFiles& files,
                                                            const metastore::Warehouse& w,
                                                            int retries, const std::string& noun,
                                                            const PrepareCommit& prepare) {
  auto& counters = files.counters();
  for (int attempt = 0;; attempt++) {
    auto prepared = prepare();
    if (!prepared) {
      if (prepared.error().code == ErrorCode::kConflict) counters.commit_conflicts++;
      return Fail(prepared.error());
    }
    std::vector<std::string> written;
    auto published = Publish(store, files, w, std::move(*prepared), written);
    if (published) {
      counters.commits++;
      return published;
    }
    // Files no pointer references: best effort, what is left is an orphan.
    for (const auto& location : written) files.DiscardUnreferenced(w, location);
    if (!metastore::IsStalePointer(published.error())) return published;
    if (attempt < retries) continue;
    counters.commit_conflicts++;
    return Fail(Error{ErrorCode::kConflict,
                      "Commit failed: the " + noun + " was changed concurrently; refresh and retry",
                      {}});
  }
}

}  // namespace tablemere::catalog
