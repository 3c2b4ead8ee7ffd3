#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches a real Consul binary (Debian 11 "bullseye" package, v1.8.7) for the integration tests
# into build-deps/consul (or the folder given as $1) and links it at <out>/bin/consul.
# Debian 12 no longer ships consul, so we read bullseye's index with a private apt state
# (own sources list, lists and cache dirs under <out>/apt): the system's apt configuration,
# package lists and installed packages are never touched, and no root is needed.
# Idempotent: does nothing when <out>/bin/consul already reports the expected version.
set -euo pipefail
cd "$(dirname "$0")/.."
want="Consul v1.8.7"
out=${1:-build-deps/consul}
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: apt-get download runs in a temp dir
bin=$out/bin/consul

# Capture first, then compare: `consul version | grep -q` can fail under pipefail (SIGPIPE).
if [ "$("$bin" version 2>/dev/null | head -n 1 || true)" = "$want" ]; then
  echo "get-consul: $want already at $bin"
  exit 0
fi

# Reuse the system's Debian mirror (first URIs: line of the deb822 file; comments are skipped
# by the anchored match) so proxies/mirrors keep working; fall back to the public one.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
  /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

state=$out/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
printf 'deb [signed-by=%s] %s bullseye main\n' \
  /usr/share/keyrings/debian-archive-keyring.gpg "$mirror" >"$state/sources.list"
# Every path apt writes to points into $state; SourceParts=/dev/null hides the system sources.
# The only lock taken is <state>/lists/lock, so no root is needed (tested as uid 65534).
# Sandbox::User: as root apt would fetch as _apt, which cannot write to our 0700 temp dir.
apt_opts=(
  -q -o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
  -o "Dir::Cache::archives=$state/cache/archives" -o APT::Get::List-Cleanup=0
  -o "APT::Sandbox::User=$(id -un)"
)
apt-get "${apt_opts[@]}" update || { echo "get-consul: apt-get update (bullseye) failed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${apt_opts[@]}" download consul) ||
  { echo "get-consul: apt-get download consul failed" >&2; exit 1; }
deb=$(find "$tmp" -maxdepth 1 -name 'consul_*.deb' | head -n 1)
[ -n "$deb" ] || { echo "get-consul: no consul .deb downloaded" >&2; exit 1; }
dpkg-deb -x "$deb" "$out/root"
[ -x "$out/root/usr/bin/consul" ] || { echo "get-consul: usr/bin/consul not in $deb" >&2; exit 1; }
mkdir -p "$out/bin"
ln -sfn ../root/usr/bin/consul "$bin"

# Never report success unless the binary actually runs and is the version the tests expect.
version=$("$bin" version 2>&1 | head -n 1) || true
if [ "$version" != "$want" ]; then
  echo "get-consul: $bin version printed '$version', expected '$want'" >&2
  exit 1
fi
echo "get-consul: $want installed at $bin"
