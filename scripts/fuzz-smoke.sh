#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's fuzz smoke test: every libFuzzer target of tests/fuzz for 10 s from its seed corpus
# (about a minute in total, besides building build-fuzz/). Fails on any crash.
set -euo pipefail
exec bash "$(dirname "$0")/fuzz.sh" 10
