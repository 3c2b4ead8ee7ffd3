#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Top functions of a Go pprof CPU profile (gzipped profile.proto), without Go's tools.

  bench/pprof_top.py PROFILE [N] [--focus SUBSTRING]

Prints the N functions with the most flat and cumulative samples; with --focus, only samples
whose stack holds a function containing SUBSTRING count (shares are of the whole profile).
"""
import gzip
import signal
import sys
from collections import Counter


def varint(buf, pos):
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def fields(buf):
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 2:
            length, pos = varint(buf, pos)
            value = buf[pos:pos + length]
            pos += length
        elif wire == 1:
            value = buf[pos:pos + 8]
            pos += 8
        elif wire == 5:
            value = buf[pos:pos + 4]
            pos += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def ints(wire, value):
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = varint(value, pos)
        out.append(v)
    return out


def parse(data):
    strings, samples, locations, functions = [], [], {}, {}
    for number, wire, value in fields(data):
        if number == 6:
            strings.append(value.decode("utf-8", "replace"))
        elif number == 2:
            locs, vals = [], []
            for n, w, v in fields(value):
                if n == 1:
                    locs += ints(w, v)
                elif n == 2:
                    vals += ints(w, v)
            samples.append((locs, vals))
        elif number == 4:
            loc_id, funcs = 0, []
            for n, w, v in fields(value):
                if n == 1:
                    loc_id = v
                elif n == 4:
                    funcs.append(next((fv for fn, _, fv in fields(v) if fn == 1), 0))
            locations[loc_id] = funcs
        elif number == 5:
            fid = name = 0
            for n, w, v in fields(value):
                if n == 1:
                    fid = v
                elif n == 2:
                    name = v
            functions[fid] = name
    return strings, samples, locations, functions


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    args = sys.argv[1:]
    focus = None
    if "--focus" in args:
        i = args.index("--focus")
        focus = args[i + 1]
        del args[i:i + 2]
    path = args[0]
    top = int(args[1]) if len(args) > 1 else 25
    strings, samples, locations, functions = parse(gzip.open(path).read())
    flat, cum, total = Counter(), Counter(), 0
    for locs, vals in samples:
        weight = vals[-1] if vals else 1  # cpu nanoseconds
        total += weight
        stack = [strings[functions[f]] for loc in locs for f in locations.get(loc, [])]
        if focus and not any(focus in name for name in stack):
            continue
        if stack:
            flat[stack[0]] += weight
        for name in set(stack):
            cum[name] += weight
    print(f"total {total / 1e9:.2f} s of CPU samples")
    print("flat%   cum%   function")
    for name, weight in cum.most_common(top):
        print(f"{100 * flat[name] / total:5.1f} {100 * weight / total:6.1f}   {name}")
    print("--- by flat")
    for name, weight in flat.most_common(top):
        print(f"{100 * weight / total:5.1f} {100 * cum[name] / total:6.1f}   {name}")


if __name__ == "__main__":
    main()
