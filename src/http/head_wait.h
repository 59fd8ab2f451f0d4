// Pure pieces of the waiting-for-a-request-head phase (the event loop in server.cc uses
// them): finding the end of a request head in the bytes read so far, and counting open
// connections per client address. No sockets here, so both are unit-tested directly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tablemere::http {

// The offset just past the "\r\n\r\n" that ends a request head in `data`, or npos.
// `scanned` is how many bytes an earlier call already searched without a match; the
// search resumes a few bytes before it, so a terminator split across reads is found and
// a head arriving in many small pieces is not rescanned from the start each time.
size_t FindHeadEnd(std::string_view data, size_t scanned = 0);

// Open connections per client address, so one address cannot take every connection.
// Not thread-safe: the server guards it with its own mutex.
class AddressCounter {
 public:
  // Counts a new connection from `address` unless it already has `cap` open; returns
  // whether it was counted.
  bool TryAdd(const std::string& address, int cap);
  // Forgets one connection from `address` (one that TryAdd counted).
  void Remove(const std::string& address);
  int Count(const std::string& address) const;
  size_t addresses() const { return counts_.size(); }

 private:
  std::unordered_map<std::string, int> counts_;
};

}  // namespace tablemere::http
