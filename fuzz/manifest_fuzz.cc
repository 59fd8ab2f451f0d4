// The fuzz target for what Tablemere reads from files clients write: Avro containers
// (Iceberg manifest lists and manifests) and the typed manifest model over them. Any
// input must either be refused with a typed error or read completely; what was read must
// print as JSON (strings are valid UTF-8) and survive a write and a second read
// unchanged. A thrown exception, an abort or a
// sanitizer report is a finding.
//
// The entry point is libFuzzer's, so the target also runs under clang's -fsanitize=fuzzer;
// mutation_driver.cc runs it without libFuzzer (g++ has none).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "avro/container.h"
#include "iceberg/manifest.h"

namespace {

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "manifest_fuzz: %s\n", what);
  std::abort();
}

nlohmann::json AsJson(const tablemere::avro::Container& c) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& r : c.records) records.push_back(tablemere::avro::ToJson(*c.schema.root, r));
  return {{"metadata", c.metadata}, {"records", std::move(records)}};
}

}  // namespace

// How many inputs were read rather than refused (the driver reports it: a mutation
// that is always refused tests nothing past the header).
extern "C" long tm_fuzz_inputs_read;  // NOLINT: shared with the driver
long tm_fuzz_inputs_read = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto read = tablemere::avro::ReadContainer(bytes);
  if (!read) return 0;
  tm_fuzz_inputs_read++;
  // Throws (nlohmann's type_error.316) on a string that is not UTF-8: the reader must not
  // have let one through.
  std::string printed = AsJson(*read).dump();
  auto written = tablemere::avro::WriteContainer(*read, std::string(16, 's'));
  if (!written) Finding("a container that was read could not be written back");
  auto again = tablemere::avro::ReadContainer(*written);
  if (!again) Finding("a container that was written could not be read back");
  if (AsJson(*again).dump() != printed) Finding("a written container reads differently");
  // The typed model: a manifest list or a manifest is read or refused, and a manifest
  // that was read is written back entry by entry in its own schema or refused (a mutated
  // schema may require a field Iceberg does not have).
  (void)tablemere::iceberg::ReadManifestList(*read);
  tablemere::iceberg::ManifestFile listed;
  listed.first_row_id = 1;
  if (auto manifest = tablemere::iceberg::ReadManifest(*read, listed)) {
    for (const auto& e : manifest->entries) (void)tablemere::iceberg::ToAvro(*read->schema.root, e);
  }
  return 0;
}
