#include "storage/aws_chunked.h"

#include <algorithm>
#include <utility>

#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::storage {

namespace {

// hex(sha256("")): the "previous chunk hash" slot of every chunk string-to-sign.
constexpr std::string_view kEmptySha256Hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// A chunk header is "hex;chunk-signature=<64 hex>" (~90 bytes) and a trailer line
// is a header name and a base64 digest; anything near this is not a real client.
constexpr size_t kMaxLineLength = 4096;
constexpr size_t kMaxTrailers = 32;

Error S3Error(ErrorCode code, const char* s3_code, std::string message) {
  return Error{code, std::move(message), {}}.With("s3_code", s3_code);
}

Error Malformed(std::string message) {
  return S3Error(ErrorCode::kInvalidInput, "InvalidRequest",
                 "Malformed aws-chunked body: " + std::move(message));
}

Error Incomplete() {
  return S3Error(ErrorCode::kInvalidInput, "IncompleteBody",
                 "You did not provide the number of bytes specified by the aws-chunked framing.");
}

Error SignatureMismatch(std::string what) {
  return S3Error(ErrorCode::kUnauthenticated, "SignatureDoesNotMatch",
                 "The request signature we calculated does not match the signature you provided "
                 "(" +
                     std::move(what) + ").");
}

std::optional<size_t> ParseHexSize(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return static_cast<size_t>(v);
}

std::string_view StripCr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

AwsChunkedDecoder::AwsChunkedDecoder(ChunkSigningContext context)
    : context_(std::move(context)), previous_signature_(context_.seed_signature) {}

bool AwsChunkedDecoder::done() const { return finished_ || state_ == State::kDone; }

Result<void> AwsChunkedDecoder::Feed(std::string_view data, std::string& out) {
  if (error_) return std::unexpected(*error_);
  Result<void> r = FeedImpl(data, out);
  if (!r) {
    error_ = r.error();
    state_ = State::kFailed;
  }
  return r;
}

Result<void> AwsChunkedDecoder::FeedImpl(std::string_view data, std::string& out) {
  size_t i = 0;
  while (i < data.size()) {
    switch (state_) {
      case State::kChunkHeader:
      case State::kTrailer:
      case State::kAfterEmpty: {
        size_t nl = data.find('\n', i);
        size_t end = nl == std::string_view::npos ? data.size() : nl;
        if (line_.size() + (end - i) > kMaxLineLength) {
          return std::unexpected(Malformed("line too long"));
        }
        line_.append(data.substr(i, end - i));
        if (nl == std::string_view::npos) return {};
        i = nl + 1;
        std::string line = std::move(line_);
        line_.clear();
        if (state_ == State::kChunkHeader) {
          TM_TRY(OnHeaderLine(StripCr(line)));
        } else {
          TM_TRY(OnTrailerLine(StripCr(line)));
        }
        break;
      }
      case State::kChunkData: {
        size_t n = std::min(chunk_remaining_, data.size() - i);
        if (context_.signed_chunks) {
          // Signed chunks are held back until their signature checks out, so no
          // unauthenticated byte ever reaches the caller.
          chunk_data_.append(data.substr(i, n));
        } else {
          out.append(data.substr(i, n));
          decoded_bytes_ += n;
        }
        chunk_remaining_ -= n;
        i += n;
        if (chunk_remaining_ == 0) state_ = State::kChunkDataCr;
        break;
      }
      case State::kChunkDataCr:
        if (data[i] == '\r') {
          state_ = State::kChunkDataLf;
          i++;
        } else if (data[i] == '\n') {  // tolerate a bare LF
          i++;
          TM_TRY(EndChunk(out));
        } else {
          return std::unexpected(Malformed("chunk data is longer than its declared size"));
        }
        break;
      case State::kChunkDataLf:
        if (data[i] != '\n') return std::unexpected(Malformed("expected CRLF after chunk data"));
        i++;
        TM_TRY(EndChunk(out));
        break;
      case State::kDone:
        // Some clients add an extra CRLF after the closing empty line.
        if (data[i] != '\r' && data[i] != '\n') {
          return std::unexpected(Malformed("data after the end of the body"));
        }
        i++;
        break;
      case State::kFailed:
        return std::unexpected(Malformed("decoder already failed"));
    }
  }
  return {};
}

Result<void> AwsChunkedDecoder::OnHeaderLine(std::string_view line) {
  std::vector<std::string> parts = Split(line, ';');
  std::string size_text = Trim(parts[0]);
  if (size_text.empty()) return std::unexpected(Malformed("empty chunk header"));
  std::optional<size_t> size = ParseHexSize(size_text);
  if (!size) return std::unexpected(Malformed("invalid chunk size"));
  if (*size > kMaxChunkSize) {
    return std::unexpected(S3Error(ErrorCode::kInvalidInput, "EntityTooLarge",
                                   "An aws-chunked chunk exceeds the maximum chunk size."));
  }
  chunk_signature_.clear();
  for (size_t k = 1; k < parts.size(); k++) {
    size_t eq = parts[k].find('=');
    if (eq == std::string::npos) continue;  // unknown valueless extension
    if (Trim(std::string_view(parts[k]).substr(0, eq)) == "chunk-signature") {
      chunk_signature_ = Trim(std::string_view(parts[k]).substr(eq + 1));
    }
  }
  // Unsigned streams may carry extensions we do not need; only signed streams
  // require (and check) chunk-signature.
  if (context_.signed_chunks && chunk_signature_.empty()) {
    return std::unexpected(SignatureMismatch("chunk without chunk-signature"));
  }
  if (*size == 0) {
    if (context_.signed_chunks) TM_TRY(VerifyChunkSignature(""));
    state_ = State::kTrailer;
    return {};
  }
  chunk_remaining_ = *size;
  if (context_.signed_chunks) {
    chunk_data_.clear();
    chunk_data_.reserve(*size);
  }
  state_ = State::kChunkData;
  return {};
}

Result<void> AwsChunkedDecoder::EndChunk(std::string& out) {
  if (context_.signed_chunks) {
    TM_TRY(VerifyChunkSignature(chunk_data_));
    out.append(chunk_data_);
    decoded_bytes_ += chunk_data_.size();
    chunk_data_.clear();
  }
  state_ = State::kChunkHeader;
  return {};
}

Result<void> AwsChunkedDecoder::VerifyChunkSignature(std::string_view data) {
  std::string string_to_sign = "AWS4-HMAC-SHA256-PAYLOAD\n" + context_.amz_date + "\n" +
                               context_.scope + "\n" + previous_signature_ + "\n" +
                               std::string(kEmptySha256Hex) + "\n" +
                               crypto::HexEncode(crypto::Sha256(data));
  std::string expected =
      crypto::HexEncode(crypto::HmacSha256(context_.signing_key, string_to_sign));
  if (!crypto::ConstantTimeEquals(expected, ToLower(chunk_signature_))) {
    return std::unexpected(SignatureMismatch("chunk signature"));
  }
  previous_signature_ = std::move(expected);
  return {};
}

Result<void> AwsChunkedDecoder::OnTrailerLine(std::string_view line) {
  if (line.empty()) {
    if (saw_trailer_line_ || !context_.has_trailer) {
      state_ = State::kDone;
    } else {
      // The AWS documentation's own example puts an empty line between the final
      // chunk and the trailer; whether trailers follow is known only later.
      state_ = State::kAfterEmpty;
    }
    return {};
  }
  if (state_ == State::kAfterEmpty && !saw_trailer_line_ && !context_.signed_chunks) {
    // aws-sdk-cpp #3259: an empty stream was framed "0\r\n\r\n0\r\n<trailer>\r\n\r\n".
    std::optional<size_t> size = ParseHexSize(Trim(Split(line, ';')[0]));
    if (size && *size == 0) {
      state_ = State::kTrailer;
      return {};
    }
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::unexpected(Malformed("invalid trailer line"));
  if (!context_.has_trailer) {
    return std::unexpected(Malformed("trailer sent without x-amz-trailer"));
  }
  std::string name = ToLower(Trim(line.substr(0, colon)));
  std::string value = Trim(line.substr(colon + 1));
  if (name.empty()) return std::unexpected(Malformed("empty trailer name"));
  if (name == "x-amz-trailer-signature") {
    if (!trailer_signature_.empty()) {
      return std::unexpected(Malformed("repeated x-amz-trailer-signature"));
    }
    trailer_signature_ = std::move(value);
  } else {
    if (trailers_.contains(name)) return std::unexpected(Malformed("repeated trailer " + name));
    if (trailers_.size() >= kMaxTrailers) return std::unexpected(Malformed("too many trailers"));
    trailers_.emplace(std::move(name), std::move(value));
  }
  saw_trailer_line_ = true;
  state_ = State::kTrailer;
  return {};
}

Result<void> AwsChunkedDecoder::VerifyTrailer() {
  if (context_.has_trailer && trailers_.empty()) return std::unexpected(Incomplete());
  if (!context_.signed_chunks || !context_.has_trailer) return {};
  if (trailer_signature_.empty()) {
    return std::unexpected(SignatureMismatch("missing x-amz-trailer-signature"));
  }
  // The signed form is the canonical header block of the trailers, "name:value\n"
  // sorted by name (aws-sdk-java-v2 SigV4TrailerProvider; checked against the AWS
  // documentation's trailer example), not the CRLF lines as sent.
  std::string canonical;
  for (const auto& [name, value] : trailers_) canonical += name + ":" + value + "\n";
  std::string string_to_sign = "AWS4-HMAC-SHA256-TRAILER\n" + context_.amz_date + "\n" +
                               context_.scope + "\n" + previous_signature_ + "\n" +
                               crypto::HexEncode(crypto::Sha256(canonical));
  std::string expected =
      crypto::HexEncode(crypto::HmacSha256(context_.signing_key, string_to_sign));
  if (!crypto::ConstantTimeEquals(expected, ToLower(trailer_signature_))) {
    return std::unexpected(SignatureMismatch("trailer signature"));
  }
  previous_signature_ = std::move(expected);
  return {};
}

Result<void> AwsChunkedDecoder::Finish() {
  if (error_) return std::unexpected(*error_);
  if (finished_) return {};
  Result<void> r = [&]() -> Result<void> {
    switch (state_) {
      case State::kChunkHeader:
        // Leniency: a final "0" chunk header with no line ending at all.
        if (!line_.empty()) {
          std::string line = std::move(line_);
          line_.clear();
          Result<void> header = OnHeaderLine(StripCr(line));
          if (!header || state_ != State::kTrailer) return std::unexpected(Incomplete());
          break;
        }
        return std::unexpected(Incomplete());
      case State::kChunkData:
      case State::kChunkDataCr:
      case State::kChunkDataLf:
        return std::unexpected(Incomplete());
      case State::kTrailer:
      case State::kAfterEmpty:
        // Leniency: the closing empty line, or even the last trailer line's CRLF,
        // may be missing.
        if (!line_.empty()) {
          std::string line = std::move(line_);
          line_.clear();
          TM_TRY(OnTrailerLine(StripCr(line)));
        }
        break;
      case State::kDone:
        break;
      case State::kFailed:
        return std::unexpected(Malformed("decoder already failed"));
    }
    return VerifyTrailer();
  }();
  if (!r) {
    error_ = r.error();
    state_ = State::kFailed;
    return r;
  }
  finished_ = true;
  state_ = State::kDone;
  return {};
}

}  // namespace tablemere::storage
