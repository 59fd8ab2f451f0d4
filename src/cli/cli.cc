#include "cli/cli.h"

#include <unistd.h>

#include <iostream>

#include "client/operations.h"
#include "client/settings.h"

namespace tablemere::cli {
namespace {

std::string Cell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) {
      if (!out.empty()) out += ",";
      if (item.is_object() && item.contains("name") && item.contains("level")) {
        out += Cell(item["name"]) + ":" + Cell(item["level"]);
      } else {
        out += Cell(item);
      }
    }
    return out.empty() ? "-" : out;
  }
  return v.dump();
}

const Json& Field(const Json& row, const std::string& key) {
  static const Json kNull;
  const Json* cur = &row;
  size_t start = 0;
  while (start <= key.size()) {
    size_t dot = key.find('.', start);
    std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(part)) return kNull;
    cur = &(*cur)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *cur;
}

// Display width in code points (every name the API returns is UTF-8).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void PrintTable(const Json& rows, const std::vector<Column>& columns) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths;
  std::vector<std::string> header;
  for (const auto& c : columns) {
    header.push_back(c.header);
    widths.push_back(Width(c.header));
  }
  cells.push_back(header);
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < columns.size(); i++) {
      line.push_back(Cell(Field(row, columns[i].key)));
      widths[i] = std::max(widths[i], Width(line.back()));
    }
    cells.push_back(std::move(line));
  }
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); i++) {
      out += line[i];
      if (i + 1 < line.size()) out += std::string(widths[i] - Width(line[i]) + 2, ' ');
    }
    std::cout << out << "\n";
  }
  if (rows.empty()) std::cout << "(none)\n";
}

void PrintObject(const Json& answer) {
  size_t width = 0;
  for (const auto& [k, v] : answer.items()) width = std::max(width, k.size());
  for (const auto& [k, v] : answer.items()) {
    std::string value = v.is_object() ? v.dump() : Cell(v);
    std::cout << k << std::string(width - k.size() + 2, ' ') << value << "\n";
  }
}

}  // namespace

std::string Cli::Url() const { return client::ResolveUrl(url_flag); }

client::ApiClient Cli::Api() const {
  std::string url = Url();
  return client::ApiClient(url, client::ResolveKey(key_flag, url),
                           std::string("tablemere-cli/") + TABLEMERE_VERSION);
}

bool Cli::Human() const {
  if (human) return true;
  if (json) return false;
  return ::isatty(STDOUT_FILENO) == 1;
}

void Cli::Print(const Json& answer, const Table& table) const {
  if (!Human()) {
    std::cout << answer.dump(2) << "\n";
    return;
  }
  if (!table.columns.empty()) {
    const Json& rows = table.list_key.empty() ? answer : Field(answer, table.list_key);
    PrintTable(rows.is_array() ? rows : Json::array(), table.columns);
  } else if (answer.is_object()) {
    PrintObject(answer);
  } else {
    std::cout << answer.dump(2) << "\n";
  }
}

int Cli::Show(const client::Outcome& outcome, const Table& table) const {
  if (!outcome) return Fail(outcome.error());
  Print(*outcome, table);
  return 0;
}

int Cli::Fail(const client::Failure& failure) const {
  // One line; bytes that are not UTF-8 (a name from the command line) are replaced, so
  // reporting a failure never throws.
  std::cerr << failure.envelope.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  return static_cast<int>(client::ClassOf(failure));
}

void Cli::Say(const std::string& line) const { (Human() ? std::cout : std::cerr) << line << "\n"; }

const char* const kCatalogHelp =
    "the catalog's warehouse_id (UUID) or its name; list both with: tablemere catalog list";

CLI::Option* AddCatalogOption(CLI::App* cmd, std::string& value) {
  return cmd->add_option("--catalog,--warehouse", value, kCatalogHelp)->required();
}

int WithCatalog(const Cli& cli, const std::string& catalog,
                const std::function<client::Outcome(const client::ApiClient&, const Json&)>& fn,
                const Table& table) {
  auto api = cli.Api();
  auto w = client::ResolveWarehouse(api, catalog);
  if (!w) return cli.Fail(w.error());
  return cli.Show(fn(api, *w), table);
}

std::string WarehousePath(const Json& w, const std::string& tail) {
  return "/v1/warehouses/" + client::ApiClient::Escape(w.value("warehouse_id", "")) + tail;
}

CLI::Option* AddIdempotencyKey(CLI::App* cmd, std::string& key) {
  return cmd->add_option("--idempotency-key", key,
                         "any string; safe to reuse when retrying the same call");
}

}  // namespace tablemere::cli
