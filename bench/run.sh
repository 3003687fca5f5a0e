#!/usr/bin/env bash
# make bench: builds the bench tools, makes sure coturn is installed, and runs
# bench/cmd/benchrun pinned to the load core (the servers it starts are pinned
# to the other). Extra arguments go to benchrun, e.g. `bench/run.sh -quick`.
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
SERVER_CPU="${BENCH_SERVER_CPU:-0}"
LOAD_CPU="${BENCH_LOAD_CPU:-1}"

if [ "$(nproc)" -lt 2 ]; then
  echo "bench: needs two cores (one for the servers, one for the load)" >&2
  exit 1
fi
for tool in taskset; do
  command -v "$tool" >/dev/null || { echo "bench: $tool missing (util-linux)" >&2; exit 1; }
done

# coturn from Debian, the reference the TURN figures are compared with.
if ! command -v turnserver >/dev/null && [ ! -x /usr/bin/turnserver ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  echo "bench: installing coturn" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq coturn >/dev/null
fi
# The Debian package enables a system coturn on 3478; the bench starts its own
# on a free port and never touches that one.

mkdir -p bin/bench
for cmd in benchrun bareudp lobbyserver wsbare turnload wsfanout; do
  "$GO" build -o "bin/bench/$cmd" "./bench/cmd/$cmd"
done
"$GO" build -o bin/bench/hostrelay-natsd ./cluster/cmd/hostrelay-natsd

exec taskset -c "$LOAD_CPU" bin/bench/benchrun \
  -hostrelay bin/hostrelay -bins bin/bench -root . \
  -server-cpu "$SERVER_CPU" -load-cpu "$LOAD_CPU" \
  -json bin/bench/results.json "$@"
