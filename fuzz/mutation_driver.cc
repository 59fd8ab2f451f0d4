// Runs a libFuzzer-style target on mutations of seed files, without libFuzzer (g++ has
// none; Debian's clang would need a second toolchain in CI). Deterministic for a given
// --seed, so a finding reproduces:
//   <target> [--runs N] [--seed S] [--last PATH] SEED_FILE...
// Each run takes a seed file and applies one to eight mutations, half of them in the
// file's last quarter where the records are (a byte set to a random
// or a boundary value, a range removed, duplicated or filled, the input cut short, a
// varint's high bit set). With --last, every input is written to PATH before it runs, so
// the one that crashed is left there.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" long tm_fuzz_inputs_read;  // how many inputs the target read, not refused

namespace {

// Byte values that sit on the decoders' boundaries: UTF-8 lead and continuation bytes
// that are never valid, zig-zag varints that decode to -1, 0 and large counts.
constexpr uint8_t kBoundaryBytes[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xbf, 0xc0,
                                      0xc1, 0xed, 0xf4, 0xf5, 0xfe, 0xff};

void Mutate(std::string& s, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  if (s.empty()) {
    s.push_back(static_cast<char>(rng()));
    return;
  }
  // Half the mutations land in the last quarter: a container's header (its schema as
  // JSON) is most of a small file, and a mutated header is mostly refused before any
  // record is decoded.
  size_t at = rng() % 2 ? pick(s.size()) : s.size() - 1 - pick(std::max<size_t>(1, s.size() / 4));
  switch (rng() % 7) {
    case 0:
      s[at] = static_cast<char>(rng());
      break;
    case 1:
      s[at] = static_cast<char>(kBoundaryBytes[pick(std::size(kBoundaryBytes))]);
      break;
    case 2:
      s.erase(at, 1 + pick(16));
      break;
    case 3:
      s.insert(at, s.substr(pick(s.size()), 1 + pick(32)));
      break;
    case 4:
      s.replace(at, std::min<size_t>(s.size() - at, 1 + pick(8)), 1 + pick(8),
                static_cast<char>(kBoundaryBytes[pick(std::size(kBoundaryBytes))]));
      break;
    case 5:
      s.resize(pick(s.size()));
      break;
    default:
      s[at] = static_cast<char>(s[at] | 0x80);
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 3000;
  uint64_t seed = 1;
  std::string last;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if ((arg == "--runs" || arg == "--seed" || arg == "--last") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--runs") runs = std::stol(value);
      if (arg == "--seed") seed = std::stoull(value);
      if (arg == "--last") last = value;
      continue;
    }
    std::ifstream in(arg, std::ios::binary);
    if (!in) {
      std::cerr << "cannot read seed file " << arg << "\n";
      return 2;
    }
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (seeds.empty()) {
    std::cerr << "usage: " << argv[0] << " [--runs N] [--seed S] [--last PATH] SEED_FILE...\n";
    return 2;
  }
  std::mt19937_64 rng(seed);
  // The seeds themselves first: they must read.
  for (const auto& s : seeds) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  for (long run = 0; run < runs; run++) {
    std::string input = seeds[rng() % seeds.size()];
    // One mutation half the time, two a quarter, … up to eight: most mutations are
    // refused, so few at a time reach the records.
    int n = 1;
    while (n < 8 && rng() % 2) n++;
    for (; n > 0; n--) Mutate(input, rng);
    if (!last.empty()) {
      std::ofstream(last, std::ios::binary | std::ios::trunc) << input;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  std::cout << runs << " mutated inputs from " << seeds.size() << " seeds, " << tm_fuzz_inputs_read
            << " of them read: no finding\n";
  return 0;
}
