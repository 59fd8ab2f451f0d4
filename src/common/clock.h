// Time and randomness are injected, never read from globals, so tests can control them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace tablemere {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch. Thread-safe.
  virtual int64_t NowMillis() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override;
};

// The system clock moved by an offset that only grows. A test server (the environment's
// TABLEMERE_TEST_CLOCK=1) advances it through an operator route, so code expiry and
// rate-limit windows are tested without sleeping; otherwise the offset stays 0.
class AdjustableClock final : public Clock {
 public:
  int64_t NowMillis() const override;
  void Advance(int64_t millis);

 private:
  SystemClock system_;
  std::atomic<int64_t> offset_ms_{0};
};

class Random {
 public:
  virtual ~Random() = default;
  // Fills `out` with `n` cryptographically secure random bytes. Thread-safe.
  virtual void Fill(unsigned char* out, size_t n) = 0;
  std::string Bytes(size_t n);
  // A random version-4 UUID in canonical lowercase form.
  std::string Uuid();
};

class SystemRandom final : public Random {
 public:
  void Fill(unsigned char* out, size_t n) override;
};

// Formats for the protocols: ISO-8601 UTC with milliseconds ("2026-12-02T10:28:33.000Z"),
// RFC 7231 HTTP date, and the compact "YYYYMMDDTHHMMSSZ" SigV4 form.
std::string FormatIso8601(int64_t millis);
std::string FormatHttpDate(int64_t millis);
std::string FormatAmzDate(int64_t millis);
// Parses "YYYYMMDDTHHMMSSZ"; returns -1 on malformed input.
int64_t ParseAmzDate(const std::string& text);
// Parses an RFC 7231 date ("Sun, 06 Nov 1994 08:49:37 GMT"); returns -1 on malformed input.
int64_t ParseHttpDate(const std::string& text);

}  // namespace tablemere
