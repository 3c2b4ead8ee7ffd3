#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Parses a Prometheus text exposition with prometheus_client's own parser.

Usage: parse_exposition.py FILE
Prints one JSON object: {"families": {name: type}, "samples": {"name{l1=v1,l2=v2}": value}}, with
labels sorted by name. Exits 1, with the parser's message on stderr, if the text does not parse.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as text_file:
        text = text_file.read()
    families = {}
    samples = {}
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = family.type
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                samples[f"{sample.name}{{{labels}}}"] = sample.value
    except ValueError as error:
        print(f"parse error: {error}", file=sys.stderr)
        return 1
    json.dump({"families": families, "samples": samples}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
