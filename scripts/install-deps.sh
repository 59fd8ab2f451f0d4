#!/usr/bin/env bash
# Installs everything Tablemere needs to build and to run its tests on a fresh Debian 12
# machine: the C++ toolchain and libraries (apt), the engines and clients the tests drive
# (pip), the Iceberg Spark jars (Maven), and DuckDB's extensions from their PyPI packages
# (DuckDB cannot download them without internet).
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --build  build dependencies only
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev libboost-system1.81-dev libssl-dev libsqlite3-dev zlib1g-dev libisal-dev libpugixml-dev libjemalloc-dev
  libargon2-dev libcurl4-openssl-dev libcli11-dev libsnappy-dev libzstd-dev libpq-dev libroaring-dev
  # CMake's FindCURL records libcurl's static link line (pkg-config --static), which names
  # brotli; the shared build does not link it, but the configure step reads its files.
  libbrotli-dev
  nlohmann-json3-dev libgtest-dev
  clang-format clang-tidy
)
# postgresql: the throwaway clusters of the metastore contract suite and of replica mode;
# haproxy: the balancer in front of the replicas in the replica tests;
# chromium: the real browser the account page's tests drive (through Playwright from PyPI,
# never its own browser download).
TEST_APT_PACKAGES=(openjdk-17-jre-headless maven curl postgresql haproxy chromium)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-}" != "--build" ]; then
  for p in "${TEST_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "apt: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}

# Arrow and Parquet C++ for the maintenance worker: Debian 12 packages neither, and the
# pyarrow wheel ships both libraries with their headers for linking. Pinned, unpacked
# into .deps/ (the build links and runs against it there; nothing Python is imported).
PYARROW_VERSION=26.0.1
if [ ! -f .deps/pyarrow/pyarrow/libparquet.so.2600 ] ||
   [ "$(cat .deps/pyarrow/.version 2>/dev/null)" != "$PYARROW_VERSION" ]; then
  rm -rf .deps/pyarrow
  $PYTHON -m pip install -q --disable-pip-version-check --no-deps --target .deps/pyarrow \
    "pyarrow==$PYARROW_VERSION"
  echo "$PYARROW_VERSION" > .deps/pyarrow/.version
fi

# The account page (web/): its packages from the npm registry, exactly as the lockfile
# names them (npm ci), again only when the lockfile changed.
if ! command -v npm > /dev/null; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
lock_sum=$(sha256sum web/package-lock.json | cut -d' ' -f1)
if [ "$(cat web/node_modules/.tablemere-lock 2>/dev/null)" != "$lock_sum" ]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" > web/node_modules/.tablemere-lock
fi

[ "${1:-}" = "--build" ] && exit 0
$PYTHON -m pip install -q --disable-pip-version-check -r tests/requirements.txt

# DuckDB's extensions come from their PyPI packages; put them where INSTALL finds them so
# the server's recipes ("INSTALL iceberg; LOAD iceberg; …") run as printed, offline.
$PYTHON - <<'PY'
import duckdb, importlib, os, shutil
version = duckdb.__version__
platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
target = os.path.expanduser(f"~/.duckdb/extensions/v{version}/{platform}")
os.makedirs(target, exist_ok=True)
for name in ("iceberg", "httpfs", "avro", "delta"):
    package = importlib.import_module(f"duckdb_extension_{name}")
    source = os.path.join(os.path.dirname(package.__file__), "extensions", f"v{version}", f"{name}.duckdb_extension")
    shutil.copy(source, os.path.join(target, f"{name}.duckdb_extension"))
print(f"duckdb extensions installed in {target}")
PY

# The Iceberg runtime for Spark 3.5 and the AWS bundle for S3FileIO, from Maven Central.
for artifact in org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.11.0 org.apache.iceberg:iceberg-aws-bundle:1.11.0; do
  mvn -q -B dependency:get -Dartifact="$artifact" -Dtransitive=false
done

# The Apache Iceberg REST Compatibility Kit (tests/rck/pom.xml) and what it runs with,
# copied into tests/rck/lib for tests/test_rck.py.
mvn -q -B -f tests/rck/pom.xml dependency:copy-dependencies -DoutputDirectory=lib
