// tablemere-maint: the table-maintenance worker (issue 10). It will run compaction,
// expiry and orphan cleanup in its own process, supervised by the server, so a crash or a
// large rewrite never touches request serving. Today it offers the Avro layer those jobs
// stand on, as commands for inspection and tests:
//   tablemere-maint avro-json FILE              the container's metadata and records as JSON
//   tablemere-maint avro-rewrite IN OUT [--codec null|deflate|snappy|zstandard]
#include <openssl/rand.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "avro/container.h"
#include "common/files.h"

namespace {

using tablemere::avro::Container;

int Failed(const std::string& what) {
  std::cerr << "tablemere-maint: " << what << "\n";
  return 1;
}

tablemere::Result<Container> Load(const std::string& path) {
  TM_ASSIGN(std::string bytes, tablemere::ReadWholeFile(path));
  return tablemere::avro::ReadContainer(bytes);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tablemere's table-maintenance worker", "tablemere-maint"};
  app.require_subcommand(1);
  std::string in, out, codec;
  auto* dump = app.add_subcommand("avro-json", "print an Avro container file as JSON");
  dump->add_option("file", in)->required();
  auto* rewrite = app.add_subcommand("avro-rewrite", "rewrite an Avro container file");
  rewrite->add_option("in", in)->required();
  rewrite->add_option("out", out)->required();
  rewrite->add_option("--codec", codec,
                      "null, deflate, snappy or zstandard (default: the input's)");
  CLI11_PARSE(app, argc, argv);

  auto c = Load(in);
  if (!c) return Failed(in + ": " + c.error().message);
  if (dump->parsed()) {
    nlohmann::json records = nlohmann::json::array();
    for (const auto& r : c->records) records.push_back(tablemere::avro::ToJson(*c->schema.root, r));
    nlohmann::json j = {{"codec", tablemere::avro::Name(c->codec)},
                        {"metadata", c->metadata},
                        {"schema", c->schema.json},
                        {"records", records}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (!codec.empty()) {
    auto parsed = tablemere::avro::ParseCodec(codec);
    if (!parsed) return Failed(parsed.error().message);
    c->codec = *parsed;
  }
  std::string sync(16, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(sync.data()), 16) != 1)
    return Failed("RAND_bytes");
  auto bytes = tablemere::avro::WriteContainer(*c, sync);
  if (!bytes) return Failed(bytes.error().message);
  auto written = tablemere::WriteFileAtomically(out, *bytes, 0644);
  if (!written) return Failed(written.error().message);
  return 0;
}
