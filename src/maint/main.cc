// tablemere-maint: the table-maintenance worker. The server runs compaction's data path
// here, in its own process (niced, bounded threads), so a crash or a large rewrite never
// touches request serving and Arrow is never linked into the server:
//   tablemere-maint compact --plan PLAN.json --result RESULT.json   (see compact.h)
//   tablemere-maint rewrite-deletes --plan PLAN.json --result RESULT.json
//   tablemere-maint translate-deletes --plan PLAN.json --result RESULT.json
//                                                          (see position_deletes.h)
// and, for inspection and tests, the Avro layer the metadata jobs stand on:
//   tablemere-maint avro-json FILE              the container's metadata and records as JSON
//   tablemere-maint avro-rewrite IN OUT [--codec null|deflate|snappy|zstandard]
#include <openssl/rand.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "avro/container.h"
#include "common/files.h"
#include "maint/compact.h"
#include "maint/position_deletes.h"

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

// Runs one job on the plan in `plan_path` (decoded as the protocol's Plan) and writes its
// answer to `result_path`.
template <typename Plan, typename Answer>
int RunPlan(const char* job, tablemere::Result<Answer> (*run)(const Plan&),
            const std::string& plan_path, const std::string& result_path) {
  namespace protocol = tablemere::maintenance::protocol;
  auto text = tablemere::ReadWholeFile(plan_path);
  if (!text) return Failed(plan_path + ": " + text.error().message);
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return Failed(plan_path + ": not JSON");
  auto plan = protocol::Decode<Plan>(json);
  if (!plan) return Failed(plan_path + ": " + plan.error().message);
  tablemere::Result<Answer> result;
  try {
    result = run(*plan);
  } catch (const std::exception& e) {
    return Failed(std::string(job) + ": " + e.what());
  }
  if (!result) return Failed(result.error().message);
  auto written =
      tablemere::WriteFileAtomically(result_path, protocol::Encode(*result).dump(), 0600);
  if (!written) return Failed(written.error().message);
  return 0;
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
  std::string plan_path, result_path;
  auto* compact = app.add_subcommand("compact", "rewrite a bin of Parquet files into one");
  compact->add_option("--plan", plan_path)->required();
  compact->add_option("--result", result_path)->required();
  auto* deletes = app.add_subcommand("rewrite-deletes", "merge position delete files into one");
  deletes->add_option("--plan", plan_path)->required();
  deletes->add_option("--result", result_path)->required();
  auto* translate = app.add_subcommand("translate-deletes",
                                       "re-aim position deletes at the files a compaction wrote");
  translate->add_option("--plan", plan_path)->required();
  translate->add_option("--result", result_path)->required();
  CLI11_PARSE(app, argc, argv);

  if (compact->parsed()) {
    return RunPlan("compact", tablemere::maint::CompactFiles, plan_path, result_path);
  }
  if (translate->parsed()) {
    return RunPlan("translate-deletes", tablemere::maint::TranslatePositionDeletes, plan_path,
                   result_path);
  }
  if (deletes->parsed()) {
    return RunPlan("rewrite-deletes", tablemere::maint::RewritePositionDeletes, plan_path,
                   result_path);
  }

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
