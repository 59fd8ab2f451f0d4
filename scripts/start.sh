#!/usr/bin/env bash
# Builds Tablemere and starts the whole stack with embedded defaults: API on
# 127.0.0.1:8080, catalog on 127.0.0.1:8181, S3 on 127.0.0.1:9000, state in ./data.
# Extra arguments go to tablemere-server (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build
scripts/build.sh
exec build/bin/tablemere-server "$@"
