#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's fuzz smoke test: every libFuzzer target of tests/fuzz for 10 s from its seed corpus, two
# at a time (one per core: about 30 s in total, besides building build-fuzz/). Fails on any
# crash.
set -euo pipefail
FUZZ_JOBS=${FUZZ_JOBS:-2} exec bash "$(dirname "$0")/fuzz.sh" 10
