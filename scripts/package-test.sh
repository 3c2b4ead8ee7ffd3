#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packaging test, from scratch: the runtime-only build in build-pkg/, `cmake --install` into a
# temporary prefix, `cpack -G DEB` (registry-consul and registry-consul-dev), lintian on both,
# their contents (nothing secret, each file in the right package), the .deb's own registryctl, an
# out-of-tree consumer (packaging/consumer/: find_package(RegistryConsul), a C host and a C++
# host) built on the packages' files and run against the installed consul-dev-server, and the
# pkg-config file; then hardening-check on every shipped ELF file, one version in every artefact
# (scripts/check-versions.py), and a second build in another directory whose .deb files and jars
# must be byte-identical. See docs/install.md.
#
#   bash scripts/package-test.sh
#   PACKAGE_TEST_BUILD=DIR          build in DIR instead of build-pkg/
#   PACKAGE_TEST_REPRODUCIBLE=0     leave out the second build (a development shortcut; CI runs it)
#   PACKAGE_TEST_REPRODUCIBLE=full  compile the second build without the compiler cache (slower)
#
# Prints the installed files, `dpkg -I` of both packages and lintian's tags; any failure (a
# lintian error too) exits non-zero naming the step. Every process it starts is stopped and its
# temporary directory removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${PACKAGE_TEST_BUILD:-$root/build-pkg}
jobs=${PACKAGE_TEST_JOBS:-2}
start=$SECONDS
# Dates what would carry the build's time (the jars' entries, the packages' files): the last
# commit's, so two builds of one commit agree (cmake/release_flags.cmake reads it too).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct)}

work=$(mktemp -d "${TMPDIR:-/tmp}/registry-package-test.XXXXXX")
prefix=$work/prefix
server_pid=
again=
step="setup"
cleanup() {
  local status=$?
  if [ -n "$server_pid" ]; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  [ -z "$again" ] || rm -rf "$again"  # the second build's tree (the reproducibility step)
  if [ "$status" -ne 0 ]; then
    echo "package-test: FAILED at step '$step' (exit $status)" >&2
  fi
}
trap cleanup EXIT

begin() {
  step=$1
  printf '\n== package-test: %s\n' "$step"
}

# The tools and hosts must find the plugin from the install layout alone.
unset LD_LIBRARY_PATH REGISTRY_PLUGIN_PATH

# /usr, as a Debian package: GNUInstallDirs then puts libraries in lib/<multiarch>, the layout
# the loader's search must handle. `cmake --install --prefix` relocates it for the test. Release:
# the package is stripped anyway, and without debug info this build takes less time in CI.
begin "configure the runtime-only build in $(basename "$build")"
reproducible=${PACKAGE_TEST_REPRODUCIBLE:-1}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths under the source tree are hashed relative to the build directory, so the second build
  # (a sibling of the first) finds the first one's objects (see the reproducibility step).
  export CCACHE_BASEDIR=$root
elif [ "$reproducible" = 1 ]; then
  echo "package-test: ccache is not installed (Debian: ccache; scripts/install-deps.sh)" >&2
  exit 1
fi
# The Maintainer field is the packager's (packaging/README.md): DEBFULLNAME and DEBEMAIL when
# set, else a name saying these are test packages, at a domain that can receive no mail.
maintainer=()
if [ -z "${DEBEMAIL:-}" ]; then
  maintainer=("-DREGISTRY_PACKAGE_MAINTAINER=registry-consul package test <package-test@registry-consul.invalid>")
fi
configure() {  # the package build in directory $1
  rm -rf "$1"
  cmake -S "$root" -B "$1" -G Ninja -DREGISTRY_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/usr "${maintainer[@]}" \
    "${launcher[@]}" >"$work/configure.log" || { cat "$work/configure.log" >&2; exit 1; }
  grep -E 'registry runtime-only|registry: (hardened|reproducible)' "$work/configure.log" || true
}
configure "$build"

begin "build (-j$jobs)"
cmake --build "$build" -j"$jobs"

begin "install into a temporary prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "installed files:"
find "$prefix" -type f | sed "s|^$prefix/|  |" | sort
echo "installed links:"
find "$prefix" -type l -printf '  %P -> %l\n' | sort
libdir=$(dirname "$(find "$prefix" -name libregistry_consul.so)")
for f in bin/registryctl bin/consul-dev-server; do
  [ -x "$prefix/$f" ] || { echo "package-test: $f was not installed" >&2; exit 1; }
done

begin "cpack -G DEB: registry-consul and registry-consul-dev"
(cd "$build" && cpack -G DEB >"$work/cpack.log") || { cat "$work/cpack.log" >&2; exit 1; }
deb_of() {  # the one package cpack made named $1
  local found=("$build/$1"_*.deb)
  if [ "${#found[@]}" -ne 1 ] || [ ! -f "${found[0]}" ]; then
    echo "package-test: cpack made no single $1_*.deb" >&2
    exit 1
  fi
  echo "${found[0]}"
}
deb=$(deb_of registry-consul)
dev_deb=$(deb_of registry-consul-dev)
for d in "$deb" "$dev_deb"; do
  echo "$d"
  dpkg -I "$d"
done
version=$(dpkg-deb -f "$deb" Version)
grep -q '^ Depends: .*libcurl' <(dpkg -I "$deb") || {
  echo "package-test: registry-consul's Depends lacks libcurl (dpkg-shlibdeps)" >&2
  exit 1
}
grep -qF "registry-consul (= $version)" <(dpkg-deb -f "$dev_deb" Depends) || {
  echo "package-test: registry-consul-dev does not depend on registry-consul (= $version)" >&2
  exit 1
}

begin "lintian on both packages (any error fails)"
command -v lintian >/dev/null || {
  echo "package-test: lintian is not installed (Debian: lintian; scripts/install-deps.sh)" >&2
  exit 1
}
lintian_rc=0
lintian --fail-on error "$deb" "$dev_deb" >"$work/lintian.out" 2>&1 || lintian_rc=$?
cat "$work/lintian.out"
echo "lintian: $(grep -c '^E: ' "$work/lintian.out" || true) errors," \
  "$(grep -c '^W: ' "$work/lintian.out" || true) warnings (packaging/README.md says why each stays)"
[ "$lintian_rc" -eq 0 ] || { echo "package-test: lintian failed (exit $lintian_rc)" >&2; exit 1; }

begin "the packages' contents: split, complete, nothing secret"
dpkg-deb -x "$deb" "$work/debroot"
contents() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort; }
contents "$deb" >"$work/runtime.files"
contents "$dev_deb" >"$work/dev.files"
# A production host installs the runtime package alone: no header, archive or build file in it.
if grep -E '^include/|\.a$|/cmake/|/pkgconfig/' "$work/runtime.files"; then
  echo "package-test: registry-consul holds the development files above" >&2
  exit 1
fi
if grep -E '^bin/|\.so(\.|$)|\.jar$' "$work/dev.files"; then
  echo "package-test: registry-consul-dev holds the runtime files above" >&2
  exit 1
fi
# Together they hold what `cmake --install` installs, plus Debian's own doc files.
(cd "$prefix" && find . ! -type d | sed 's|^\./||' | sort) >"$work/installed.files"
sort "$work/runtime.files" "$work/dev.files" \
  | grep -vE '^share/doc/[^/]+/changelog\.Debian\.gz$|^share/doc/registry-consul-dev/' \
    >"$work/packaged.files" || true
diff -u "$work/installed.files" "$work/packaged.files" || {
  echo "package-test: the packages and cmake --install differ in the files above" >&2
  exit 1
}
dpkg-deb -x "$dev_deb" "$work/debroot"
secrets=$(cd "$work/debroot" && {
  find . -type f \( -name '*.key' -o -iname '*token*' -o -name '*.p12' -o -name '*.pfx' \)
  grep -rlE -- '-----BEGIN [A-Z ]*PRIVATE KEY-----' . || true  # a PEM key, RSA, EC, ...
})
if [ -n "$secrets" ]; then
  printf 'package-test: the packages hold secret-looking files:\n%s\n' "$secrets" >&2
  exit 1
fi
for pkg in registry-consul registry-consul-dev; do
  log=$work/debroot/usr/share/doc/$pkg/changelog.Debian.gz
  [ -f "$work/debroot/usr/share/doc/$pkg/copyright" ] || {
    echo "package-test: $pkg has no usr/share/doc/$pkg/copyright" >&2
    exit 1
  }
  zcat "$log" | sed -n 1p | grep -qF "($version)" || {
    echo "package-test: $pkg's changelog.Debian.gz has no first entry for $version" >&2
    exit 1
  }
done
for pkg in registry-consul registry-consul-dev; do
  grep -qx 'License: Apache-2.0' "$work/debroot/usr/share/doc/$pkg/copyright" || {
    echo "package-test: $pkg's copyright names no 'License: Apache-2.0'" >&2
    exit 1
  }
done
echo "ok: $(wc -l <"$work/runtime.files") files in registry-consul," \
  "$(wc -l <"$work/dev.files") in registry-consul-dev"

begin "the .deb's registryctl --help and --version"
deb_ctl=$work/debroot/usr/bin/registryctl
"$deb_ctl" --help >"$work/help.out"
head -n 1 "$work/help.out"
"$deb_ctl" --version

begin "start the installed consul-dev-server on a free port"
"$prefix/bin/consul-dev-server" --http-addr=127.0.0.1:0 --session-ttl-min=1s \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
address=
for _ in $(seq 200); do
  address=$(sed -n 's/^consul-dev-server listening on //p' "$work/server.out")
  [ -n "$address" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.05
done
[ -n "$address" ] || { echo "package-test: the dev server did not start" >&2; exit 1; }
echo "listening on $address"

# registryctl finds the plugin through the loader's default search path: the installed one
# relative to its prefix, the .deb's in its extracted /usr.
begin "installed and packaged registryctl: put, get, rm"
ctl=("$prefix/bin/registryctl" --servers "$address" --namespace package_test_ctl)
"${ctl[@]}" put /metadata/db installed
[ "$("$deb_ctl" --servers "$address" --namespace package_test_ctl get /metadata/db)" = installed ]
"$deb_ctl" --servers "$address" --namespace package_test_ctl rm /metadata/db
if "${ctl[@]}" get /metadata/db >/dev/null 2>&1; then
  echo "package-test: /metadata/db is still there after rm" >&2
  exit 1
fi
echo "ok"

# On the files of both packages, as a host's build machine with both installed has them.
begin "build the out-of-tree consumer (packaging/consumer) on the packages with find_package"
cmake -S "$root/packaging/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/debroot/usr" >/dev/null
cmake --build "$work/consumer" -j"$jobs"

begin "run the consumer's C and C++ hosts: put, get, delete"
"$work/consumer/c_host" "$address"
"$work/consumer/cpp_host" "$address"

begin "pkg-config --cflags --libs registry-consul, and a host built with it"
export PKG_CONFIG_PATH=$libdir/pkgconfig
flags=$(pkg-config --cflags --libs registry-consul)
echo "$flags"
include_dir=$(pkg-config --variable=includedir registry-consul)
[ -f "$include_dir/host/loader.h" ] || {
  echo "package-test: pkg-config's includedir $include_dir has no host/loader.h" >&2
  exit 1
}
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 -o "$work/cpp_host_pc" "$root/packaging/consumer/cpp_host.cc" \
  -DPLUGIN_DIR="\"$(pkg-config --variable=plugindir registry-consul)\"" $flags
"$work/cpp_host_pc" "$address"

if command -v javac >/dev/null; then
  # Each installed jar on the real ShardingSphere of its version (the jars Maven resolved for the
  # build's tests: ShardingSphere's own, never shipped).
  for version in 5.5.2 5.5.3; do
    jar=("$prefix"/share/java/registry-consul-for-shardingsphere-"$version"-*.jar)
    [ -f "${jar[0]}" ] || { echo "package-test: a JDK is here but no bridge jar for ShardingSphere $version was installed" >&2; exit 1; }
    begin "the installed bridge for ShardingSphere $version: a JVM finds it by type, persists, reads, deletes"
    host_cp=$(cat "$build/plugin/java/maven/registry-consul-for-shardingsphere-$version/test-classpath.txt")
    rm -rf "$work/java" && mkdir -p "$work/java"
    javac --release 17 -cp "$host_cp" -d "$work/java" "$root/packaging/consumer/JavaHost.java"
    echo "with the installed native libraries on java.library.path:"
    java -Djava.library.path="$libdir" -cp "$work/java:$host_cp:${jar[0]}" JavaHost "$address"
    echo "with the copies the jar carries (extracted on first use):"
    java -cp "$work/java:$host_cp:${jar[0]}" JavaHost "$address"
  done
else
  echo "package-test: no JDK here, so no ShardingSphere bridge to test"
fi

# Every ELF file the packages ship, and the native libraries inside the jars, with Debian's
# hardening-check: PIE (executables), stack protector, fortify, RELRO and BIND_NOW. Not its
# control-flow check: a linked file carries the IBT/SHSTK marker only when every object in it
# does, and Debian 12's C runtime start files (Scrt1.o, crti.o, crtn.o of libc6-dev) carry none,
# so no program linked on Debian 12 can pass it. Our own objects are checked for the marker
# instead, in the static libraries of the -dev package (compiled with -fcf-protection).
begin "hardening-check on every shipped ELF file"
command -v hardening-check >/dev/null || {
  echo "package-test: hardening-check is not installed (Debian: devscripts; scripts/install-deps.sh)" >&2
  exit 1
}
mkdir -p "$work/jar-native"
for jar in "$work"/debroot/usr/share/java/*.jar; do
  [ -f "$jar" ] || continue
  unzip -q -o "$jar" 'META-INF/native/*' -d "$work/jar-native/$(basename "$jar" .jar)"
done
elves=()
while IFS= read -r -d '' f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$f")
done < <(find "$work/debroot" "$work/jar-native" -type f -print0 | sort -z)
[ "${#elves[@]}" -ge 3 ] || { echo "package-test: found only ${#elves[@]} ELF files" >&2; exit 1; }
hardening_rc=0
hardening-check --nocfprotection "${elves[@]}" >"$work/hardening.out" 2>&1 || hardening_rc=$?
sed "s|$work/||" "$work/hardening.out"
# "unknown, no protectable libc functions used" is no failure: hardening-check counts it as a
# pass. Any "no" (a missing protection) fails, and so does its exit status.
# (ignored): what hardening-check itself leaves out, a shared library's PIE and, as told, CFI.
if [ "$hardening_rc" -ne 0 ] || grep -E ': no(,|$)' "$work/hardening.out" | grep -v '(ignored)$'; then
  echo "package-test: a shipped ELF file lacks a protection (above)" >&2
  exit 1
fi
unmarked=$(cd "$work/debroot" && for a in $(find . -name '*.a' | sort); do
  readelf -n "$a" | awk -v a="$a" '/^File: /{m=$2} /x86 feature: IBT, SHSTK/{ok[m]=1} /^File: /{all[$2]=1}
    END {for (f in all) if (!ok[f]) print a ": " f}'
done)
if [ -n "$unmarked" ]; then
  printf 'package-test: objects compiled without -fcf-protection:\n%s\n' "$unmarked" >&2
  exit 1
fi
echo "ok: ${#elves[@]} ELF files hardened; every object of the static libraries has IBT and SHSTK"

begin "one version everywhere (scripts/check-versions.py)"
version_args=(--registryctl "$deb_ctl" --dev-server "$work/debroot/usr/bin/consul-dev-server"
  --plugin "$(find "$work/debroot" -name libregistry_consul.so)"
  --pc "$(find "$work/debroot" -name registry-consul.pc)" --deb "$deb" --deb "$dev_deb")
for page in "$work"/debroot/usr/share/man/man1/*.1.gz; do version_args+=(--man "$page"); done
for jar in "$work"/debroot/usr/share/java/*.jar; do
  [ -f "$jar" ] && version_args+=(--jar "$jar")
done
python3 "$root/scripts/check-versions.py" --source "$root" "${version_args[@]}"

# The same commit built again in another directory must give the same bytes: nothing of the
# build's path or time may reach a package or a jar (cmake/release_flags.cmake, docs/install.md).
#
# By default the second build compiles through the compiler cache the first one filled: what a
# different directory changes in an object is the paths compiled into it, and those are looked
# for directly below, in every shipped file; the cache leaves linking, archiving, stripping,
# Maven and cpack to be done again, which is where times and orders enter. That keeps the check
# to about a minute in CI; PACKAGE_TEST_REPRODUCIBLE=full compiles everything again instead.
if [ "$reproducible" != 0 ]; then
  begin "no build path in any shipped file"
  mkdir -p "$work/jar-all"
  for jar in "$work"/debroot/usr/share/java/*.jar; do
    [ -f "$jar" ] && unzip -q -o "$jar" -d "$work/jar-all/$(basename "$jar" .jar)"
  done
  leaks=$(grep -rlaF -e "$root" -e "$build" "$work/debroot" "$work/jar-all" || true)
  if [ -n "$leaks" ]; then
    printf 'package-test: these shipped files hold a path of this machine (%s):\n%s\n' \
      "$root" "$leaks" >&2
    exit 1
  fi
  echo "ok: no file of the packages or the jars names $root"

  begin "reproducible: a second build in another directory gives the same .deb files and jars"
  again_start=$SECONDS
  again=${build}-again  # a sibling: the same relative paths, for the compiler cache
  [ "$reproducible" = full ] && export CCACHE_DISABLE=1
  configure "$again"
  cmake --build "$again" -j"$jobs" >"$work/again.log" || { tail -n 30 "$work/again.log" >&2; exit 1; }
  (cd "$again" && cpack -G DEB >"$work/cpack-again.log") || { cat "$work/cpack-again.log" >&2; exit 1; }
  differ=0
  for first in "$deb" "$dev_deb" "$build"/plugin/java/maven/*/*.jar; do
    [ -f "$first" ] || continue
    second=$again/${first#"$build"/}
    if cmp -s "$first" "$second"; then
      echo "identical: ${first#"$build"/} ($(sha256sum <"$first" | cut -c1-16))"
      continue
    fi
    differ=1
    echo "DIFFERENT: ${first#"$build"/}" >&2
    case "$first" in
      *.deb)  # name the members that differ, and the files inside them
        for d in "$first" "$second"; do
          rm -rf "$d.x" && dpkg-deb -R "$d" "$d.x"
        done
        diff -r "$first.x" "$second.x" >&2 || true
        listing() { dpkg-deb "$1" "$2" | tar tv --full-time | sort -k6; }
        diff <(listing --ctrl-tarfile "$first") <(listing --ctrl-tarfile "$second") >&2 || true
        diff <(listing --fsys-tarfile "$first") <(listing --fsys-tarfile "$second") >&2 || true ;;
      *.jar) diff <(unzip -v "$first" | sed 1d) <(unzip -v "$second" | sed 1d) >&2 || true ;;
    esac
  done
  [ "$differ" -eq 0 ] || { echo "package-test: the two builds differ (above)" >&2; exit 1; }
  echo "the second build took $((SECONDS - again_start)) s"
fi

step="done"
echo
echo "package-test: passed in $((SECONDS - start)) s"
