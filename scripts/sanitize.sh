#!/usr/bin/env bash
# Builds the readers of client-written files (Avro, Iceberg metadata, manifests and
# deletion vectors) with
# AddressSanitizer and UBSan into build-sanitize/, and runs their unit tests and fuzz
# targets there; any sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(common_test avro_test iceberg_test manifest_fuzz deletion_vector_fuzz)
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTM_SANITIZE=ON > /dev/null
ninja -C build-sanitize -j"${JOBS:-$(nproc)}" "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
for t in common_test avro_test iceberg_test; do
  build-sanitize/tests/$t --gtest_brief=1
done
build-sanitize/tests/manifest_fuzz --runs "${FUZZ_RUNS:-3000}" \
  --last build-sanitize/fuzz-manifest-last-input fuzz/seeds/*.avro
build-sanitize/tests/deletion_vector_fuzz --runs "${FUZZ_RUNS:-3000}" \
  --last build-sanitize/fuzz-deletion-vector-last-input fuzz/seeds/*.dv
