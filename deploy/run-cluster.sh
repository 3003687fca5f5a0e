#!/usr/bin/env bash
# make run-cluster: a cluster of two nodes on this machine, to try one —
# NATS with JetStream (bin/hostrelay-natsd) on 127.0.0.1:4222, node a
# (region eu-west) on :8081 and node b (region us-east) on :8082, each with
# its own TURN (3481, 3482). Ctrl-C stops all three. docs/cluster.md.
set -euo pipefail
cd "$(dirname "$0")/.."

NATS_ADDR="${NATS_ADDR:-127.0.0.1:4222}"
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
# Ctrl-C reaches the whole process group: the servers drain on their own
# SIGINT, so only wait for them (a second signal would cut the drain short).
trap 'trap - EXIT; wait 2>/dev/null; exit 130' INT
trap stop EXIT TERM

bin/hostrelay-natsd -addr "$NATS_ADDR" & pids+=($!)
# The nodes reconnect if NATS is not up yet, but must reach it at start.
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/${NATS_ADDR%:*}/${NATS_ADDR#*:}") 2>/dev/null && break
  sleep 0.1
done
bin/hostrelay -nats "nats://$NATS_ADDR" -node-id a -region eu-west -http :8081 -turn-udp :3481 -turn-tcp :3481 "$@" & pids+=($!)
bin/hostrelay -nats "nats://$NATS_ADDR" -node-id b -region us-east -http :8082 -turn-udp :3482 -turn-tcp :3482 "$@" & pids+=($!)
echo "cluster: node a http://127.0.0.1:8081 (eu-west), node b http://127.0.0.1:8082 (us-east); Ctrl-C stops it" >&2
wait -n
