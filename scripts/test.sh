#!/usr/bin/env bash
# Installs every dependency, builds, and runs all the tests: the GoogleTest unit tests
# (and the Avro and manifest readers' tests and fuzz target again under the sanitizers),
# then the black-box and engine tests (pytest) against servers they start themselves:
# once embedded (SQLite, local disk), once on an S3 store (SeaweedFS), and once in the
# scale-out shape (PostgreSQL and SeaweedFS).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/lint.sh
scripts/build.sh
echo "== unit tests (ctest)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "== the readers of client-written files under AddressSanitizer and UBSan"
scripts/sanitize.sh
echo "== black-box and engine tests (pytest)"
python3 -m pytest tests -q "$@"
echo "== the same tests with the server on the S3 backend (a SeaweedFS the tests start)"
# test_s3_backend.py and test_replicas.py start their own backends and ran above already.
python3 -m pytest tests -q --object-store s3 --ignore tests/test_s3_backend.py \
  --ignore tests/test_replicas.py "$@"
echo "== the same tests in the scale-out shape: PostgreSQL metastore, S3 backend"
python3 -m pytest tests -q --metastore postgres --object-store s3 \
  --ignore tests/test_s3_backend.py --ignore tests/test_replicas.py "$@"
