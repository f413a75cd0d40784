#!/usr/bin/env bash
# test.sh - the whole test suite, as CI runs it: a -Werror build with every
# unit, property, golden and CLI test; the same suite under ASan+UBSan; and a
# short seeded libFuzzer run of every parser (when clang is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2

echo "== build (-Werror) and test"
cmake -S . -B build -DGP_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure

echo "== ASan+UBSan build and test"
cmake -S . -B build-asan -DGP_WERROR=ON -DGP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j"$jobs" --output-on-failure

if command -v clang >/dev/null 2>&1; then
    echo "== fuzz targets (short seeded runs)"
    CC=clang cmake -S . -B build-fuzz -DGP_FUZZ=ON -DGP_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-fuzz -j"$jobs"
    ctest --test-dir build-fuzz -R '^fuzz/' -j"$jobs" --output-on-failure
else
    echo "== fuzz targets skipped: clang is not installed"
fi
echo "== all tests passed"
