// Streaming decoder for S3 aws-chunked request bodies in all four forms:
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER,
// STREAMING-UNSIGNED-PAYLOAD-TRAILER, and unsigned without trailer.
// Written by hand: no packaged library decodes this framing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tablemere::storage {

struct ChunkSigningContext {
  bool signed_chunks = false;  // chunk-signature= present and verified
  bool has_trailer = false;    // x-amz-trailer present
  std::string signing_key;     // raw SigV4 signing key (when signed)
  std::string amz_date;        // "YYYYMMDDTHHMMSSZ"
  std::string scope;           // "YYYYMMDD/region/s3/aws4_request"
  std::string seed_signature;  // hex signature from the Authorization header
};

// Feed() the (HTTP-dechunked) body bytes as they arrive; decoded payload bytes are
// appended to `out`. Finish() checks the stream ended cleanly and verifies the
// trailer signature. Errors carry detail "s3_code": IncompleteBody,
// SignatureDoesNotMatch, InvalidRequest (malformed framing), EntityTooLarge
// (a chunk over kMaxChunkSize).
class AwsChunkedDecoder {
 public:
  // Largest single chunk accepted: clients use 64 KiB–1 MiB; 16 MiB bounds memory.
  static constexpr size_t kMaxChunkSize = 16 * 1024 * 1024;

  explicit AwsChunkedDecoder(ChunkSigningContext context);

  Result<void> Feed(std::string_view data, std::string& out);
  Result<void> Finish();
  bool done() const;
  // Trailer headers, lower-case names (e.g. "x-amz-checksum-crc32" → base64 value),
  // excluding x-amz-trailer-signature. Valid after Finish().
  const std::map<std::string, std::string>& trailers() const { return trailers_; }
  uint64_t decoded_bytes() const { return decoded_bytes_; }

 private:
  enum class State {
    kChunkHeader,  // reading "hex(len)[;ext]" up to '\n'
    kChunkData,    // copying chunk_remaining_ bytes
    kChunkDataCr,  // expecting the CRLF (or bare LF) after chunk data
    kChunkDataLf,
    kTrailer,     // after the final 0-size chunk: trailer lines or the closing empty line
    kAfterEmpty,  // an empty line came before any trailer (AWS doc framing); trailers may follow
    kDone,        // closing empty line seen; only stray CR/LF may follow
    kFailed,
  };

  Result<void> FeedImpl(std::string_view data, std::string& out);
  Result<void> OnHeaderLine(std::string_view line);
  Result<void> OnTrailerLine(std::string_view line);
  Result<void> EndChunk(std::string& out);
  Result<void> VerifyChunkSignature(std::string_view data);
  Result<void> VerifyTrailer();

  ChunkSigningContext context_;
  std::map<std::string, std::string> trailers_;
  uint64_t decoded_bytes_ = 0;
  State state_ = State::kChunkHeader;
  std::string line_;                // partial line carried across Feed() calls
  std::string chunk_signature_;     // chunk-signature of the chunk being read
  std::string previous_signature_;  // seed, then each verified chunk signature
  size_t chunk_remaining_ = 0;
  std::string chunk_data_;  // buffered chunk, for signature verification
  std::string trailer_signature_;
  bool saw_trailer_line_ = false;
  bool finished_ = false;
  std::optional<Error> error_;  // sticky: every call after a failure returns it
};

}  // namespace tablemere::storage
