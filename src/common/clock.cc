#include "common/clock.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace tablemere {

int64_t SystemClock::NowMillis() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string Random::Bytes(size_t n) {
  std::string out(n, '\0');
  Fill(reinterpret_cast<unsigned char*>(out.data()), n);
  return out;
}

std::string Random::Uuid() {
  unsigned char b[16];
  Fill(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

void SystemRandom::Fill(unsigned char* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) {
    // A failing system RNG is an environment fault we cannot continue through safely.
    throw std::runtime_error("RAND_bytes failed");
  }
}

namespace {
std::tm ToTm(int64_t millis) {
  std::time_t secs = static_cast<std::time_t>(millis / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}
}  // namespace

std::string FormatIso8601(int64_t millis) {
  std::tm tm = ToTm(millis);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis % 1000));
  return buf;
}

std::string FormatHttpDate(int64_t millis) {
  std::tm tm = ToTm(millis);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string FormatAmzDate(int64_t millis) {
  std::tm tm = ToTm(millis);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

int64_t ParseAmzDate(const std::string& text) {
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z') return -1;
  std::tm tm{};
  if (std::sscanf(text.c_str(), "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

int64_t ParseHttpDate(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return -1;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

int64_t AdjustableClock::NowMillis() const {
  return system_.NowMillis() + offset_ms_.load(std::memory_order_relaxed);
}

void AdjustableClock::Advance(int64_t millis) {
  if (millis > 0) offset_ms_.fetch_add(millis, std::memory_order_relaxed);
}

}  // namespace tablemere
