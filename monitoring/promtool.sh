#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs `promtool ARGS...` for the monitoring.* tests. Without promtool (Debian: prometheus, which
# scripts/install-deps.sh installs) a development machine skips the test, saying why (exit 77,
# ctest's SKIP_RETURN_CODE); under CI (REGISTRY_CI=1, set by .ci/run) a missing promtool fails.
set -euo pipefail
if ! command -v promtool >/dev/null; then
  if [ "${REGISTRY_CI:-}" = 1 ]; then
    echo "monitoring: promtool is missing, and CI must run this test (scripts/install-deps.sh)" >&2
    exit 1
  fi
  echo "monitoring: SKIPPED: promtool is not installed (Debian: prometheus; scripts/install-deps.sh)"
  exit 77
fi
exec promtool "$@"
