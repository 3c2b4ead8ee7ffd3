#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every artefact given shows the one version of the project: the VERSION of
`project(registry_consul VERSION x.y.z ...)` in the top-level CMakeLists.txt, where it is set.

Always checked, from the source tree: packaging/changelog's first entry is that version (its
Debian revision is the packages'), and no pom.xml holds a release version of its own (the jars
get it from CMake, -Drevision). Each option adds an artefact, built or installed:

  --registryctl PATH, --dev-server PATH   `--version` prints "<tool> x.y.z"
  --plugin PATH                           the plugin's ABI info (RegistryPluginInit's
                                          plugin_version, read through the C ABI by ctypes)
  --jar PATH (repeatable)                 named ...-x.y.z.jar; manifest Implementation-Version;
                                          META-INF/LICENSE and NOTICE and Bundle-License present
  --pc PATH                               registry-consul.pc's Version
  --man PATH (repeatable)                 a manual page's .TH footer (plain or .gz)
  --deb PATH (repeatable)                 the package's Version is x.y.z-<changelog revision>

Exit status 1 names every disagreement. Used by ctest (packaging.versions_agree, on the build
tree) and scripts/package-test.sh (on the installed files and the .deb packages).
"""
import argparse
import ctypes
import gzip
import pathlib
import re
import subprocess
import sys
import zipfile

faults = []


def expect(what, shown, version):
    if shown != version:
        faults.append(f"{what}: shows {shown!r}, the project is {version!r}")
    else:
        print(f"check-versions: {what}: {shown}")


def plugin_version(path):
    class Error(ctypes.Structure):
        _fields_ = [("code", ctypes.c_int32), ("message", ctypes.c_char_p)]

    class Api(ctypes.Structure):  # the ABI 1.0 table's start: header, repository_type, version
        _fields_ = [("struct_size", ctypes.c_uint32), ("abi_version", ctypes.c_uint32),
                    ("release_error", ctypes.c_void_p), ("repository_type", ctypes.c_char_p),
                    ("plugin_version", ctypes.c_char_p)]

    library = ctypes.CDLL(str(path))
    init = library.RegistryPluginInit
    init.argtypes = [ctypes.c_uint32, ctypes.POINTER(Api), ctypes.POINTER(Error)]
    api, error = Api(struct_size=ctypes.sizeof(Api)), Error()
    code = init(1 << 16, ctypes.byref(api), ctypes.byref(error))  # a host of ABI 1.0
    if code != 0 or not api.plugin_version:
        faults.append(f"{path}: RegistryPluginInit returned {code}, no plugin_version")
        return None
    return api.plugin_version.decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path, help="the source tree (default: this script's)")
    parser.add_argument("--registryctl")
    parser.add_argument("--dev-server")
    parser.add_argument("--plugin")
    parser.add_argument("--pc")
    parser.add_argument("--jar", action="append", default=[])
    parser.add_argument("--man", action="append", default=[])
    parser.add_argument("--deb", action="append", default=[])
    args = parser.parse_args()

    cmake = (args.source / "CMakeLists.txt").read_text()
    match = re.search(r"^project\(registry_consul VERSION (\d+\.\d+\.\d+)\b", cmake, re.M)
    if not match:
        sys.exit("check-versions: no project(registry_consul VERSION x.y.z) in CMakeLists.txt")
    version = match.group(1)
    print(f"check-versions: the project is {version} (CMakeLists.txt)")

    top = (args.source / "packaging/changelog").read_text().splitlines()[0]
    entry = re.match(r"registry-consul \(([^-)]+)-([^)]+)\)", top)
    expect("packaging/changelog's first entry", entry and entry.group(1), version)
    revision = entry.group(2) if entry else "?"
    for pom in sorted((args.source / "plugin/java").glob("**/pom.xml")):
        for found in re.findall(r"<revision>([^<]*)</revision>", pom.read_text()):
            if re.fullmatch(r"\d+\.\d+\.\d+", found):
                faults.append(f"{pom}: <revision>{found}</revision> is a second copy of the "
                              "version (CMake passes -Drevision)")

    for flag, tool in (("registryctl", "registryctl"), ("dev_server", "consul-dev-server")):
        path = getattr(args, flag)
        if path:
            out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
            expect(f"{tool} --version", out.strip().removeprefix(f"{tool} "), version)
    if args.plugin:
        expect(f"{args.plugin}: the ABI's plugin_version", plugin_version(args.plugin), version)
    if args.pc:
        pc = pathlib.Path(args.pc).read_text()
        shown = re.search(r"^Version: (\S+)", pc, re.M)
        expect(f"{args.pc}: Version", shown and shown.group(1), version)
    for man in args.man:
        opener = gzip.open if man.endswith(".gz") else open
        with opener(man, "rt") as page:
            shown = re.search(r'^\.TH .*"registry-consul (\S+)"', page.read(), re.M)
        expect(f"{man}: .TH", shown and shown.group(1), version)
    for jar in args.jar:
        name = pathlib.Path(jar).name
        shown = re.fullmatch(r"registry-consul-for-shardingsphere-[\d.]+-(.+)\.jar", name)
        expect(f"{name}: file name", shown and shown.group(1), version)
        with zipfile.ZipFile(jar) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode()
            names = set(archive.namelist())
        shown = re.search(r"^Implementation-Version: (\S+)", manifest, re.M)
        expect(f"{name}: manifest Implementation-Version", shown and shown.group(1), version)
        for needed in ("META-INF/LICENSE", "META-INF/NOTICE"):
            if needed not in names:
                faults.append(f"{name}: no {needed}")
        if not re.search(r"^Bundle-License: Apache-2\.0", manifest, re.M):
            faults.append(f"{name}: the manifest has no Bundle-License: Apache-2.0")
    for deb in args.deb:
        shown = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True,
                               text=True, check=True).stdout.strip()
        expect(f"{pathlib.Path(deb).name}: Version", shown, f"{version}-{revision}")

    for fault in faults:
        print(f"check-versions: {fault}", file=sys.stderr)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
