#!/usr/bin/env bash
# Sets up a fresh machine, builds vidmap (warnings in vidmap's own code are errors) and runs
# its tests, then CI's checks (scripts/ci_checks.sh: format, clang-tidy, the CPU tests under
# AddressSanitizer and UndefinedBehaviorSanitizer). GPU tests (label `gpu`) skip when no GPU is
# present. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" -DVIDMAP_WERROR=ON
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
"$root/scripts/ci_checks.sh"
