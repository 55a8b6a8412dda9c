#!/usr/bin/env bash
# The checks CI runs after the tests (scripts/test.sh calls this): the format of the sources,
# clang-tidy on scripts/tidy_files.txt, and the CPU test suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer in its own folder (build-asan). Each step prints its time; the
# costs on the 2-core dev machine are in docs/benchmarks.md ("CI checks").
#
#   scripts/ci_checks.sh [format|tidy|sanitizers]...   (default: all three)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(format tidy sanitizers)
jobs=$(nproc)

step_format() {
  # Every C++ and CUDA source the repository tracks, against .clang-format.
  git ls-files -z '*.cc' '*.h' '*.cu' '*.cuh' | xargs -0 clang-format --dry-run -Werror
}

step_tidy() {
  # clang-tidy reads the compile commands of the main build (scripts/build.sh made it).
  [[ -f build/compile_commands.json ]] || { echo "ci_checks: build/ first (scripts/build.sh)"; exit 1; }
  grep -v '^#' scripts/tidy_files.txt | grep . | xargs -P "$jobs" -n 1 \
    clang-tidy -p build --quiet --extra-arg=-Wno-unknown-warning-option
}

step_sanitizers() {
  # CPU code only (no CUDA, no benchmarks, no Python module: an extension built with ASan
  # needs the runtime preloaded into python), -O1 with line tables only (-g1: a report names
  # each frame's function, file and line; full debug info made the build slower), every
  # finding fatal.
  local flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIDMAP_CUDA=OFF \
    -DVIDMAP_BUILD_BENCH=OFF -DVIDMAP_PYTHON=OFF -DVIDMAP_WERROR=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$root/scripts/lsan.supp" \
    ctest --test-dir build-asan -L cpu --output-on-failure -j "$jobs"
}

for s in "${steps[@]}"; do
  echo "== ci_checks: $s"
  start=$SECONDS
  "step_$s"
  echo "== ci_checks: $s passed in $((SECONDS - start)) s"
done
