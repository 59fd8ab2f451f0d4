#include "http/head_wait.h"

namespace tablemere::http {

size_t FindHeadEnd(std::string_view data, size_t scanned) {
  // Up to three bytes of a terminator may sit at the end of what was scanned.
  size_t from = scanned > 3 ? scanned - 3 : 0;
  size_t at = data.find("\r\n\r\n", from);
  return at == std::string_view::npos ? std::string_view::npos : at + 4;
}

bool AddressCounter::TryAdd(const std::string& address, int cap) {
  int& n = counts_[address];
  if (n >= cap) {
    if (n == 0) counts_.erase(address);
    return false;
  }
  n++;
  return true;
}

void AddressCounter::Remove(const std::string& address) {
  auto it = counts_.find(address);
  if (it == counts_.end()) return;
  // Addresses with nothing open are dropped, so the map stays as small as what is open.
  if (--it->second <= 0) counts_.erase(it);
}

int AddressCounter::Count(const std::string& address) const {
  auto it = counts_.find(address);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace tablemere::http
