#include "avro/container.h"

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "avro/encoding.h"
#include "common/strings.h"

namespace tablemere::avro {
namespace {

constexpr std::string_view kMagic("Obj\x01", 4);
// The largest block we decompress, and the most all blocks of a file may decompress to:
// manifests are a few MB; this stops a hostile file from claiming gigabytes.
constexpr size_t kMaxBlockBytes = 512u << 20;
constexpr size_t kMaxFileBytes = 1024u << 20;

Error Corrupt(const std::string& what) {
  return Error{ErrorCode::kInvalidInput, "Avro container: " + what, {}};
}

Result<std::string> Inflate(std::string_view in) {
  z_stream z{};
  // Avro's deflate is raw deflate (RFC 1951): no zlib header or checksum.
  if (inflateInit2(&z, -15) != Z_OK) return Fail(Corrupt("inflate init"));
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return Fail(Corrupt("a deflate block does not inflate"));
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxBlockBytes) {
      inflateEnd(&z);
      return Fail(Corrupt("a block inflates beyond the limit"));
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      return Fail(Corrupt("a truncated deflate block"));
    }
  }
  inflateEnd(&z);
  return out;
}

Result<std::string> Deflate(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Fail(Error{ErrorCode::kInternal, "deflate init failed", {}});
  }
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Fail(Error{ErrorCode::kInternal, "deflate failed", {}});
  out.resize(z.total_out);
  return out;
}

uint32_t Crc32(std::string_view data) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

// Snappy blocks carry the CRC-32 of the uncompressed data, big-endian, after them.
Result<std::string> Unsnappy(std::string_view in) {
  if (in.size() < 4) return Fail(Corrupt("a snappy block without its checksum"));
  std::string_view body = in.substr(0, in.size() - 4);
  size_t n = 0;
  if (snappy_uncompressed_length(body.data(), body.size(), &n) != SNAPPY_OK || n > kMaxBlockBytes) {
    return Fail(Corrupt("a snappy block with a bad length"));
  }
  std::string out(n, '\0');
  if (snappy_uncompress(body.data(), body.size(), out.data(), &n) != SNAPPY_OK) {
    return Fail(Corrupt("a snappy block does not decompress"));
  }
  out.resize(n);
  auto c = reinterpret_cast<const unsigned char*>(in.data() + body.size());
  uint32_t expected =
      (uint32_t{c[0]} << 24) | (uint32_t{c[1]} << 16) | (uint32_t{c[2]} << 8) | c[3];
  if (Crc32(out) != expected) return Fail(Corrupt("a snappy block fails its checksum"));
  return out;
}

std::string Snappy(std::string_view in) {
  size_t n = snappy_max_compressed_length(in.size());
  std::string out(n, '\0');
  snappy_compress(in.data(), in.size(), out.data(), &n);
  out.resize(n);
  uint32_t crc = Crc32(in);
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xff);
  return out;
}

Result<std::string> Unzstd(std::string_view in) {
  unsigned long long n = ZSTD_getFrameContentSize(in.data(), in.size());
  if (n == ZSTD_CONTENTSIZE_ERROR) return Fail(Corrupt("not a zstd frame"));
  std::string out;
  if (n != ZSTD_CONTENTSIZE_UNKNOWN) {
    if (n > kMaxBlockBytes) return Fail(Corrupt("a zstd block beyond the limit"));
    out.resize(n);
    size_t got = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(got)) return Fail(Corrupt("a zstd block does not decompress"));
    out.resize(got);
    return out;
  }
  // Streaming writers may leave the size out of the frame header. Decoded until the
  // frame ends (rc 0) and the input is used up: output still buffered inside zstd when
  // the input runs out is drained by further calls.
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return Fail(Error{ErrorCode::kInternal, "zstd: out of memory", {}});
  ZSTD_initDStream(ds);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  std::string buf(64 * 1024, '\0');
  size_t rc = 1;
  while (rc != 0 || input.pos < input.size) {
    ZSTD_outBuffer output{buf.data(), buf.size(), 0};
    rc = ZSTD_decompressStream(ds, &output, &input);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(ds);
      return Fail(Corrupt("a zstd block does not decompress"));
    }
    out.append(buf.data(), output.pos);
    if (out.size() > kMaxBlockBytes) {
      ZSTD_freeDStream(ds);
      return Fail(Corrupt("a zstd block beyond the limit"));
    }
    if (rc != 0 && input.pos == input.size && output.pos < output.size) {
      ZSTD_freeDStream(ds);  // no input left and nothing more came out: cut short
      return Fail(Corrupt("a truncated zstd block"));
    }
  }
  ZSTD_freeDStream(ds);
  return out;
}

Result<std::string> Zstd(std::string_view in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  if (ZSTD_isError(n)) return Fail(Error{ErrorCode::kInternal, "zstd compression failed", {}});
  out.resize(n);
  return out;
}

Result<std::string> Decompress(Codec codec, std::string_view block) {
  switch (codec) {
    case Codec::kNull:
      return std::string(block);
    case Codec::kDeflate:
      return Inflate(block);
    case Codec::kSnappy:
      return Unsnappy(block);
    case Codec::kZstd:
      return Unzstd(block);
  }
  return Fail(Corrupt("unknown codec"));
}

Result<std::string> Compress(Codec codec, std::string_view block) {
  switch (codec) {
    case Codec::kNull:
      return std::string(block);
    case Codec::kDeflate:
      return Deflate(block);
    case Codec::kSnappy:
      return Snappy(block);
    case Codec::kZstd:
      return Zstd(block);
  }
  return Fail(Error{ErrorCode::kInternal, "unknown codec", {}});
}

}  // namespace

const char* Name(Codec c) {
  switch (c) {
    case Codec::kNull:
      return "null";
    case Codec::kDeflate:
      return "deflate";
    case Codec::kSnappy:
      return "snappy";
    case Codec::kZstd:
      return "zstandard";
  }
  return "null";
}

Result<Codec> ParseCodec(const std::string& name) {
  if (name.empty() || name == "null") return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "zstandard" || name == "zstd") return Codec::kZstd;
  return Fail(Corrupt("unsupported codec " + name));
}

Result<Container> ReadContainer(std::string_view bytes) {
  if (!bytes.starts_with(kMagic)) return Fail(Corrupt("not an Avro object container file"));
  Decoder d(bytes.substr(kMagic.size()));
  Container c;
  std::string schema_text, codec_name;
  // The metadata: a map<bytes>, in blocks like any map.
  while (true) {
    TM_ASSIGN(int64_t count, d.Long());
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) return Fail(Corrupt("a metadata count out of range"));
      count = -count;
      TM_TRY(d.Long());
    }
    // Each entry takes at least two bytes (two lengths).
    if (static_cast<uint64_t>(count) > d.remaining()) {
      return Fail(Corrupt("a metadata count beyond the end of the data"));
    }
    for (int64_t i = 0; i < count; i++) {
      TM_ASSIGN(int64_t kn, d.Long());
      if (kn < 0) return Fail(Corrupt("a negative length"));
      TM_ASSIGN(auto key, d.Bytes(static_cast<size_t>(kn)));
      TM_ASSIGN(int64_t vn, d.Long());
      if (vn < 0) return Fail(Corrupt("a negative length"));
      TM_ASSIGN(auto value, d.Bytes(static_cast<size_t>(vn)));
      // Held as text (Iceberg writes JSON and names there) and rendered as JSON by the
      // jobs that read manifests: refused here when it is not UTF-8, not far away.
      if (!ValidUtf8(key) || !ValidUtf8(value)) {
        return Fail(Corrupt("a metadata entry that is not UTF-8"));
      }
      if (key == "avro.schema") {
        schema_text = std::string(value);
      } else if (key == "avro.codec") {
        codec_name = std::string(value);
      } else {
        c.metadata.emplace(std::string(key), std::string(value));
      }
    }
  }
  TM_ASSIGN(auto sync, d.Bytes(16));
  const std::string marker(sync);
  TM_ASSIGN(c.schema, ParseSchema(schema_text));
  TM_ASSIGN(c.codec, ParseCodec(codec_name));
  int64_t budget = kMaxValues;
  size_t decompressed = 0;
  while (d.remaining() > 0) {
    TM_ASSIGN(int64_t count, d.Long());
    TM_ASSIGN(int64_t size, d.Long());
    if (count < 0 || size < 0) return Fail(Corrupt("a negative block count or size"));
    TM_ASSIGN(auto block, d.Bytes(static_cast<size_t>(size)));
    TM_ASSIGN(auto block_sync, d.Bytes(16));
    if (block_sync != marker) return Fail(Corrupt("a block's sync marker does not match"));
    TM_ASSIGN(std::string data, Decompress(c.codec, block));
    decompressed += data.size();
    if (decompressed > kMaxFileBytes)
      return Fail(Corrupt("the blocks decompress beyond the limit"));
    if (!CountFits(*c.schema.root, count, data.size())) {
      return Fail(Corrupt("a block claims more records than it holds"));
    }
    Decoder records(data, &budget);
    for (int64_t i = 0; i < count; i++) {
      TM_ASSIGN(Value v, records.Read(*c.schema.root));
      c.records.push_back(std::move(v));
    }
    if (records.remaining() != 0) return Fail(Corrupt("a block holds more than its records"));
  }
  return c;
}

Result<std::string> WriteContainer(const Container& c, const std::string& sync,
                                   size_t block_records) {
  if (sync.size() != 16) return Fail(Error{ErrorCode::kInternal, "a sync marker is 16 bytes", {}});
  if (block_records == 0) block_records = 1;
  std::string out(kMagic);
  std::map<std::string, std::string> metadata = c.metadata;
  metadata["avro.schema"] = c.schema.json.dump();
  metadata["avro.codec"] = Name(c.codec);
  EncodeLong(static_cast<int64_t>(metadata.size()), out);
  for (const auto& [k, v] : metadata) {
    EncodeLong(static_cast<int64_t>(k.size()), out);
    out += k;
    EncodeLong(static_cast<int64_t>(v.size()), out);
    out += v;
  }
  out += '\0';
  out += sync;
  for (size_t start = 0; start < c.records.size(); start += block_records) {
    size_t end = std::min(c.records.size(), start + block_records);
    std::string block;
    for (size_t i = start; i < end; i++) TM_TRY(Encode(*c.schema.root, c.records[i], block));
    TM_ASSIGN(std::string packed, Compress(c.codec, block));
    EncodeLong(static_cast<int64_t>(end - start), out);
    EncodeLong(static_cast<int64_t>(packed.size()), out);
    out += packed;
    out += sync;
  }
  return out;
}

}  // namespace tablemere::avro
