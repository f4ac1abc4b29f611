#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs the packages, fetches the
# real models, builds a release build and an AddressSanitizer + UndefinedBehaviorSanitizer
# build, and runs every ctest test (unit, CLI, ORT agreement, ONNX conformance) in both.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/tests/data/fetch_models.sh" --with-ort >/dev/null # ORT: the op suite's oracle
"$root/scripts/build.sh" "$root/build"
"$root/scripts/build.sh" "$root/build-asan" -DNB_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
# the libFuzzer harnesses (clang): every parser fuzzed for 30 s (ctest -L fuzz)
CC=clang "$root/scripts/build.sh" "$root/build-fuzz" -DNB_FUZZ=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
echo "== release build"
(cd "$root/build" && ctest --output-on-failure -j 2) || status=1
echo "== sanitizer build (address, undefined)"
(cd "$root/build-asan" && ctest --output-on-failure -j 2) || status=1
echo "== fuzz build: each parser's libFuzzer harness for 30 s"
(cd "$root/build-fuzz" && ctest --output-on-failure -j 2 -L fuzz) || status=1
grep -h "^fuzz_.*crashes" "$root/build-fuzz/Testing/Temporary/LastTest.log" || true
# the conformance summary line (the full run's, the one with the most cases), for the log
printf 'conformance (release build): '
grep -h "passed, .* failed, .* skipped" "$root/build/Testing/Temporary/LastTest.log" | sort -n | tail -n 1 || true
exit $status
