#!/usr/bin/env bash
# Sets up a fresh machine, builds vidmap (warnings in vidmap's own code are errors) and runs
# its tests, then CI's checks (scripts/ci_checks.sh: format, clang-tidy, the CPU tests under
# AddressSanitizer and UndefinedBehaviorSanitizer). GPU tests (label `gpu`) skip when no GPU is
# present. This is what CI runs (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" -DVIDMAP_WERROR=ON
# The Python tests run once, below, against the installed package (as a user has it), so
# ctest leaves out its own run of them against build/python.
skip_python=()
[ -d "$root/build/python" ] && skip_python=(-E '^python_test$')
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)" "${skip_python[@]}"
# The Python package as a user installs it: pip from the checkout, offline, into a fresh venv
# on Debian's python3 (its numpy and pybind11 through --system-site-packages), reusing build/;
# then its tests against the installed package. pytest's status 5 (no tests) fails too.
if [ -d "$root/build/python" ]; then
  venv=$(mktemp -d)/venv
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  VIDMAP_BUILD_DIR="$root/build" "$venv/bin/python" -m pip install --no-build-isolation \
    --no-index "$root"
  (cd "$venv" && VIDMAP_SOURCE_DIR="$root" VIDMAP_CLI="$root/build/src/vidmap/cli/vidmap" \
    OMP_WAIT_POLICY=passive "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$root/python/tests")
  "$venv/bin/python" -c "import vidmap, sys; print('installed:', vidmap.__file__)"
fi
"$root/scripts/ci_checks.sh"
