#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every PromQL query of the alerting rules and the dashboard names only what the
plugin exports, and that the dashboard shows every family it exports.

The exported names come from a running plugin, not from a list kept by hand: the script starts
consul-dev-server on a free port and reads `registryctl stats` (the plugin's exposition through
its C ABI, docs/operations.md). Then, for every query (rules' `expr`, dashboard targets and
template variables):
  - each metric name is an exported series (a family, or a histogram's _bucket/_sum/_count);
  - each label a selector matches on is one of that metric's labels (or job/instance, which the
    scrape adds), and each value it matches with = or a plain a|b regex is one the plugin uses.
Exit status 1 names every fault.

  check_queries.py --registryctl PATH --dev-server PATH alerts.yaml dashboard.json
  check_queries.py --exposition FILE alerts.yaml dashboard.json   (a saved scrape)
"""
import argparse
import json
import re
import subprocess
import sys
import time

import yaml

SCRAPE_LABELS = {"job", "instance"}
# PromQL words that are not metric names: operators, modifiers and aggregation keywords.
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "offset", "atan2", "inf", "nan"}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def scrape(registryctl, dev_server):
    server = subprocess.Popen([dev_server, "--http-addr=127.0.0.1:0"], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        match = re.match(r"consul-dev-server listening on (\S+)", line)
        if not match:
            sys.exit(f"check_queries: the dev server did not start (said {line!r})")
        for _ in range(50):  # the server answers once it has printed the line; be patient anyway
            run = subprocess.run([registryctl, "--servers", match.group(1), "stats"],
                                 capture_output=True, text=True)
            if run.returncode == 0:
                return run.stdout
            time.sleep(0.1)
        sys.exit(f"check_queries: registryctl stats failed: {run.stderr}")
    finally:
        server.kill()
        server.wait()


def exported(exposition):
    """Maps each exported series name to {label: set of values}; also returns the families."""
    series, families = {}, set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            families.add(line.split()[2])
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition("{")
        name = name.split()[0]
        labels = series.setdefault(name, {})
        for label, _, value in MATCHER.findall("{" + rest):
            labels.setdefault(label, set()).add(value)
    return series, families


def queries(path):
    """Yields (where, PromQL) for every query of a rules file or a Grafana dashboard."""
    if path.endswith(".json"):
        dashboard = json.load(open(path))
        for variable in dashboard.get("templating", {}).get("list", []):
            if variable.get("type") == "query":
                query = variable["query"]
                query = query["query"] if isinstance(query, dict) else query
                inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", query)
                yield f"{path}: variable {variable['name']}", inner.group(1) if inner else query
        for panel in dashboard["panels"]:
            for target in panel.get("targets", []):
                yield f"{path}: panel '{panel['title']}' {target['refId']}", target["expr"]
    else:
        for group in yaml.safe_load(open(path))["groups"]:
            for rule in group["rules"]:
                yield f"{path}: {rule.get('alert') or rule.get('record')}", rule["expr"]


def check(where, query, series):
    faults, names = [], set()
    # Label matchers first: `metric{label="value"}`.
    for metric, body in SELECTOR.findall(query):
        for label, op, value in MATCHER.findall(body):
            if label in SCRAPE_LABELS or metric not in series:
                continue
            known = series[metric]
            if label not in known:
                faults.append(f"{where}: {metric} has no label '{label}'")
            elif op in ("=", "=~", "!~") and re.fullmatch(r"[A-Za-z0-9_.+|]*", value):
                for alternative in value.split("|"):
                    if alternative and alternative not in known[label]:
                        faults.append(f"{where}: {metric}{{{label}}} never is '{alternative}'")
    # Then every identifier outside strings, braces, ranges and grouping lists is a function
    # (followed by '('), a keyword, or a metric name.
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', query)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    text = re.sub(r"\$\{?\w+\}?", "", text)  # Grafana's variables
    for match in IDENT.finditer(text):
        word = match.group(0)
        if word.lower() in KEYWORDS or text[match.end():].lstrip().startswith("("):
            continue
        if match.start() > 0 and (text[match.start() - 1].isdigit() or text[match.start() - 1] == "."):
            continue  # the unit or exponent of a number: 5m, 1e3
        names.add(word)
        if word not in series:
            faults.append(f"{where}: '{word}' is not a metric the plugin exports")
    if not names:
        faults.append(f"{where}: names no metric at all")
    return faults, names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registryctl")
    parser.add_argument("--dev-server")
    parser.add_argument("--exposition", help="a saved `registryctl stats` output instead")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.exposition:
        text = open(args.exposition).read()
    elif args.registryctl and args.dev_server:
        text = scrape(args.registryctl, args.dev_server)
    else:
        parser.error("give --exposition, or --registryctl and --dev-server")
    series, families = exported(text)
    if len(families) < 10:
        sys.exit(f"check_queries: the scrape has only {len(families)} families:\n{text}")
    faults, count = [], 0
    for path in args.files:
        shown = set()
        for where, query in queries(path):
            count += 1
            found, names = check(where, query, series)
            faults += found
            shown |= {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}
        if path.endswith(".json"):
            faults += [f"{path}: no panel shows {family}" for family in sorted(families - shown)]
    for fault in faults:
        print(f"check_queries: {fault}", file=sys.stderr)
    if faults:
        return 1
    print(f"check_queries: {count} queries name only the {len(families)} families the plugin "
          "exports, and the dashboard shows them all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
