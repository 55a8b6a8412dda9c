#!/usr/bin/env bash
# Sets up a fresh machine, builds vidmap and runs its tests. GPU tests (label `gpu`) skip
# when no GPU is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
