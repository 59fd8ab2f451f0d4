// The optimistic commit tables and views share: prepare (read the current metadata,
// check requirements, apply updates), write each changed document as a new metadata
// file, then compare-and-swap every pointer in one metastore transaction. A lost race
// (metastore::StalePointer) deletes the files the attempt wrote and prepares again, up
// to `retries` times; any other failure deletes them too and is returned as it is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/catalog_support.h"
#include "metastore/metastore.h"

namespace tablemere::catalog {

// One entry's part of a commit, as `prepare` computed it.
struct EntryChange {
  // The pointer the swap expects ("" for a create).
  std::string expected_metadata_location;
  // The entry after the commit; metadata_location and metadata_json are filled in by the
  // loop. Its location is where the new metadata file goes.
  metastore::TableEntry replacement;
  Json next;            // the new metadata document
  bool changed = true;  // false: nothing to write or swap (answered as it stands)
};

// What a commit published for each change, in the order `prepare` returned them.
struct PublishedMetadata {
  std::string metadata_location;  // the unchanged pointer when the change was a no-op
  std::string metadata_json;
  Json metadata;
};

using PrepareCommit = std::function<Result<std::vector<EntryChange>>()>;

// `noun` ("table", "view") names what changed concurrently in the 409 that follows the
// last lost race.
Result<std::vector<PublishedMetadata>> CommitOptimistically(metastore::CatalogStore& store,
                                                            WarehouseFiles& files,
                                                            const metastore::Warehouse& w,
                                                            int retries, const std::string& noun,
                                                            const PrepareCommit& prepare);

}  // namespace tablemere::catalog
