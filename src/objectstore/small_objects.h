// Small objects kept in memory on their way in and out of a store that packs them into its
// index (the local disk's SQLite WAL): a writer that holds the bytes until it either
// publishes them in one index write or, once they outgrow the limit, moves them into a
// file writer; and a reader over bytes already in memory.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "objectstore/object_store.h"

namespace tablemere::objectstore {

class SmallObjectWriter final : public ObjectWriter {
 public:
  // Publishes the whole object; `info.size` and `info.etag` are already filled in.
  using PublishBytes = std::function<Result<ObjectInfo>(std::string bytes, ObjectInfo info)>;
  // Opens the writer that takes over once the object is larger than the limit.
  using OpenSpill = std::function<Result<std::unique_ptr<ObjectWriter>>()>;

  SmallObjectWriter(uint64_t limit, PublishBytes publish, OpenSpill spill, bool reports_replaced)
      : limit_(limit),
        publish_(std::move(publish)),
        spill_(std::move(spill)),
        reports_replaced_(reports_replaced) {}
  ~SmallObjectWriter() override { Abort(); }

  Result<void> Write(const char* data, size_t size) override;
  Result<ObjectInfo> Commit(ObjectInfo info) override;
  void Abort() override;
  uint64_t bytes_written() const override { return written_; }
  bool ReportsReplaced() const override { return reports_replaced_; }

 private:
  const uint64_t limit_;
  PublishBytes publish_;
  OpenSpill spill_;
  const bool reports_replaced_;
  std::string bytes_;                      // until the object outgrows the limit
  std::unique_ptr<ObjectWriter> spilled_;  // after
  uint64_t written_ = 0;
  bool closed_ = false;
};

// Reads bytes the reader owns, lending them to Next without a copy.
class MemoryReader final : public ObjectReader {
 public:
  explicit MemoryReader(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(char* buffer, size_t size) override;
  Result<std::string_view> Next(size_t max) override;

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

}  // namespace tablemere::objectstore
