#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cluster-mode demo: a Consul-compatible dev server and several middleware instances, each a
# separate `registryctl` process that reaches the registry only through the plugin SPI
# (build/lib/libregistry_consul.so).
#
#   bash tools/quickstart/demo.sh [--consul] [BUILD_DIR]      (default: build)
#
# --consul runs it against a real `consul agent -dev` (build-deps/consul/bin/consul, fetched by
# scripts/get-consul.sh, or $REGISTRY_TEST_CONSUL_BIN) instead of the dev server.
#
# Story: a watcher subscribes to the online nodes; three compute nodes come online (ephemeral
# keys), metadata is persisted and listed, one node is killed with SIGKILL and its online key
# expires after the session TTL, the others stop with SIGTERM and their keys vanish at once; the
# watcher reports every one of those changes; two instances run a schema change under one
# distributed lock, one after the other. Every process it starts is stopped on exit.
set -euo pipefail

use_consul=false
if [ "${1:-}" = --consul ]; then
  use_consul=true
  shift
fi
build=${1:-build}
[[ "$build" = /* ]] || build="$PWD/$build"
server_bin="$build/bin/consul-dev-server"
$use_consul && server_bin=${REGISTRY_TEST_CONSUL_BIN:-$(dirname "$0")/../../build-deps/consul/bin/consul}
ctl_bin="$build/bin/registryctl"
for bin in "$server_bin" "$ctl_bin"; do
  if [ ! -x "$bin" ]; then
    echo "demo: $bin is missing; build first (cmake -G Ninja -S . -B build && cmake --build build)" >&2
    exit 1
  fi
done

ttl_seconds=2
work=$(mktemp -d "${TMPDIR:-/tmp}/registry-demo.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# Waits until FILE has a line equal to TEXT, at most SECONDS; fails with FILE's neighbour .err.
wait_for_line() {
  local file=$1 text=$2 seconds=$3
  local deadline=$(($(now_ms) + seconds * 1000))
  until grep -qx -- "$text" "$file" 2>/dev/null; do
    if (($(now_ms) > deadline)); then
      echo "demo: no '$text' in $file after ${seconds}s" >&2
      cat "${file%.out}.err" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.05
  done
}

ctl() { "$ctl_bin" --config="$work/registry.yaml" "$@"; }

# Starts a real consul agent -dev on free ports and waits until it serves sessions.
start_consul() {
  local ports
  ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
  read -r http serf_lan serf_wan rpc <<<"$ports"
  printf '{"session_ttl_min":"1s","disable_update_check":true,"ports":{"http":%s,"serf_lan":%s,"serf_wan":%s,"server":%s,"dns":-1,"grpc":-1}}\n' \
    "$http" "$serf_lan" "$serf_wan" "$rpc" >"$work/consul.json"
  "$server_bin" agent -dev -config-file="$work/consul.json" >"$work/server.out" 2>"$work/server.err" &
  pids+=($!)
  address=127.0.0.1:$http
  # A session create needs a leader and the node registered: the last thing to become ready.
  if ! python3 - "$address" <<'PY'; then
import json, sys, time, urllib.request
base = "http://" + sys.argv[1]
deadline = time.time() + 30
while time.time() < deadline:
    try:
        put = lambda path: urllib.request.urlopen(urllib.request.Request(base + path, method="PUT"), timeout=2).read()
        put("/v1/session/destroy/" + json.loads(put("/v1/session/create"))["ID"])
        sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit(1)
PY
    echo "demo: consul did not start" >&2
    cat "$work/server.out" >&2
    exit 1
  fi
}

if $use_consul; then
  say "Starting a real Consul agent ($("$server_bin" version | head -n 1), -dev) on free ports"
  start_consul
else
  say "Starting the Consul-compatible dev server on a free port (session TTL minimum 1s)"
  "$server_bin" --http-addr=127.0.0.1:0 --session-ttl-min=1s >"$work/server.out" 2>"$work/server.err" &
  pids+=($!)
  deadline=$(($(now_ms) + 10000))
  until address=$(sed -n 's/^consul-dev-server listening on //p' "$work/server.out") && [ -n "$address" ]; do
    if (($(now_ms) > deadline)); then
      echo "demo: the dev server did not start" >&2
      cat "$work/server.err" >&2
      exit 1
    fi
    sleep 0.05
  done
fi
note "listening on $address"

cat >"$work/registry.yaml" <<EOF
mode:
  type: Cluster
  repository:
    type: Consul
    props:
      namespace: governance_ds
      server-lists: $address
      timeToLiveSeconds: $ttl_seconds
EOF
note "every instance reads this registry YAML (ShardingSphere's block, type: Consul):"
sed 's/^/     | /' "$work/registry.yaml"

online=/nodes/compute_nodes/online/proxy
say "A watcher subscribes to $online (registryctl watch: one JSON line per change)"
# --stats: as it stops, the watcher prints the plugin's metrics on stderr (shown at the end).
"$ctl_bin" --config="$work/registry.yaml" --stats watch "$online" >"$work/watch.out" 2>"$work/watch.err" &
watch_pid=$!
pids+=($!)
wait_for_line "$work/watch.err" "registryctl: watching $online" 10
note "watching (pid $watch_pid); it prints what it saw at the end of the node story"

say "Three compute nodes come online, each as its own registryctl process"
declare -A node_pid
for port in 3307 3308 3309; do
  id="proxy-$port"
  # The binary itself, not the ctl function: $! must be registryctl's pid, not a subshell's.
  "$ctl_bin" --config="$work/registry.yaml" ephemeral "$online/$id" \
    "{\"host\":\"127.0.0.1\",\"port\":$port}" >"$work/$id.out" 2>"$work/$id.err" &
  node_pid[$id]=$!
  pids+=($!)
  wait_for_line "$work/$id.out" ready 10
  note "$id is online (pid ${node_pid[$id]})"
done
note "online nodes: $(ctl ls "$online" | paste -sd ' ')"
note "proxy-3308 announced: $(ctl get "$online/proxy-3308")"

say "Metadata is persisted (persistent keys, they outlive every node)"
schema=/metadata/sharding_db/schemas/sharding_db
ctl put /metadata/sharding_db/active_version 0
ctl put "$schema/tables/t_order" '{"name":"t_order","columns":["order_id","user_id","status"]}'
ctl put "$schema/tables/t_order_item" '{"name":"t_order_item","columns":["item_id","order_id"]}'
ctl put /metadata/sharding_db/rules/sharding '{"tables":{"t_order":{"actualDataNodes":"ds_${0..1}.t_order_${0..1}"}}}'
note "schemas of sharding_db: $(ctl ls /metadata/sharding_db/schemas | paste -sd ' ')"
note "tables:                 $(ctl ls "$schema/tables" | paste -sd ' ')"
note "t_order:                $(ctl get "$schema/tables/t_order")"

say "proxy-3308 crashes (SIGKILL): nobody closes its session, so its key waits for the TTL"
killed_at=$(now_ms)
kill -KILL "${node_pid[proxy-3308]}"
wait "${node_pid[proxy-3308]}" 2>/dev/null || true
limit_ms=$((ttl_seconds * 2 * 1000 + 10000))
while ctl exists "$online/proxy-3308"; do
  if (($(now_ms) - killed_at > limit_ms)); then
    echo "demo: $online/proxy-3308 still exists $((limit_ms / 1000))s after the kill" >&2
    exit 1
  fi
  sleep 0.1
done
took=$(($(now_ms) - killed_at))
note "$online/proxy-3308 disappeared $((took / 1000)).$(printf '%03d' $((took % 1000)))s after the kill (session TTL ${ttl_seconds}s; Consul allows up to 2 x TTL)"
note "online nodes: $(ctl ls "$online" | paste -sd ' ')"

say "The other nodes shut down cleanly (SIGTERM): they close their sessions, keys vanish at once"
for id in proxy-3307 proxy-3309; do
  kill -TERM "${node_pid[$id]}"
  if wait "${node_pid[$id]}"; then
    note "$id exited with status 0"
  else
    echo "demo: $id exited with status $?" >&2
    cat "$work/$id.err" >&2
    exit 1
  fi
  if ctl exists "$online/$id"; then
    echo "demo: $online/$id survived a clean shutdown" >&2
    exit 1
  fi
  note "$online/$id is gone right after the exit"
done
remaining=$(ctl ls "$online" | paste -sd ' ')
note "online nodes: ${remaining:-(none)}"
note "metadata is still there: $(ctl ls "$schema/tables" | paste -sd ' ')"

say "What the watcher saw: every node coming and going, in order"
deadline=$(($(now_ms) + 10000))
until [ "$(grep -c . "$work/watch.out")" -ge 6 ]; do
  if (($(now_ms) > deadline)); then
    echo "demo: the watcher reported $(grep -c . "$work/watch.out") of 6 changes" >&2
    cat "$work/watch.out" "$work/watch.err" >&2
    exit 1
  fi
  sleep 0.05
done
sed 's/^/   /' "$work/watch.out"
kill -TERM "$watch_pid"
wait "$watch_pid"
note "the watcher stopped cleanly on SIGTERM"

say "Two instances run a schema change under one distributed lock (registryctl lock)"
# Each holder logs its start and end to one shared file; the lock must keep them apart.
change='echo "$1 starts the change" >>"$2"; sleep 0.3; echo "$1 ends the change" >>"$2"'
for who in instance-a instance-b; do
  "$ctl_bin" --config="$work/registry.yaml" --stats lock schema-change --timeout-ms 10000 -- \
    /bin/sh -c "$change" sh "$who" "$work/lock.log" 2>"$work/$who.err" &
  node_pid[$who]=$!
  pids+=($!)
done
for who in instance-a instance-b; do
  if ! wait "${node_pid[$who]}"; then
    echo "demo: $who's lock run failed" >&2
    cat "$work/$who.err" >&2
    exit 1
  fi
done
sed 's/^/   /' "$work/lock.log"
if ! awk 'NR % 2 == 1 { who = $1; next } $1 != who { exit 1 }' "$work/lock.log"; then
  echo "demo: the two changes overlapped" >&2
  exit 1
fi
note "one after the other: each change ran only while its instance held the lock"

say "A few of the plugin's metrics (registryctl --stats; 'registryctl stats' scrapes on demand)"
# Non-zero samples of a few families, without the histogram buckets.
show_metrics() {
  grep -E "^registry_consul_($2)" "$1" | grep -v -e '_bucket{' -e ' 0$' | sed 's/^/   /' || true
}
note "the watcher, as it stopped:"
show_metrics "$work/watch.err" 'requests_total|watch_events_total|watch_delivery_lag_seconds_(sum|count)'
note "instance-a, after its locked change:"
show_metrics "$work/instance-a.err" 'lock_(acquisitions_total|wait_duration_seconds_(sum|count))|session_creations_total'

say "Cleaning up"
ctl rm /metadata
ctl rm /nodes
ctl rm /lock  # lock keys outlive their holds, as in Consul; nobody holds this one any more
note "namespace governance_ds is empty again: [$(ctl ls / | paste -sd ' ')]"
echo
echo "demo: done (the server is stopped on exit)"
