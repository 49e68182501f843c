#!/usr/bin/env bash
# The whole ldapfe test suite, from a fresh Debian 12 machine (as root):
# installs what it needs, builds three configurations and runs every suite.
#   build/       debugoptimized: unit + integration tests (real clients)
#   build-release/ -O3: compiled only (warnings as errors at -O3)
#   build-asan/  ASan + UBSan:   unit + integration tests (the daemon too), but
#                the rate and scale tests (suite 'load', tests/integration/meson.build)
#   build-fuzz/  clang+libFuzzer: each fuzz target for a bounded time
# Ends with one line "N passed, N failed".
# Environment: LFE_FUZZ_SECONDS (default 8) per fuzz target.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/deps.sh || { echo "deps.sh failed" >&2; exit 1; }

passed=0 failed=0
tally() {   # tally BUILD_DIR: add the results of the last meson test run
  local log="$1/meson-logs/testlog.json"
  [[ -f $log ]] || return 0
  local p f
  p=$(grep -c '"result": "OK"' "$log" || true)
  # A skip (exit 77) counts as a failure: this script runs as root with
  # everything built, so a skip means a test could not do its job.
  f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS|SKIP)"' "$log" || true)
  passed=$((passed + p)); failed=$((failed + f))
}
setup() {   # setup DIR [meson args...]
  local dir=$1; shift
  if [[ -f $dir/build.ninja ]]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}
fatal=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S), $((SECONDS / 60)) min $((SECONDS % 60)) s in) ==="; }

step "build (debugoptimized)"
if setup build && meson compile -C build; then
  step "unit + integration tests"
  meson test -C build --print-errorlogs --suite unit --suite integration --suite package --num-processes 2
  tally build
else
  echo "build failed" >&2; fatal=1
fi

# Release (-O3) builds what the benchmark runs; gcc's warnings differ by
# optimisation level, so -Werror is checked here too (compile only, the
# three programs and the libraries they link: the tests are compiled at -O2
# above and again by the package test's dpkg-buildpackage).
step "build (release, -O3)"
if ! { setup build-release --buildtype=release &&
       meson compile -C build-release dataplane/ldapfe mgmt/ldapfectl gen/ldapfe-gen; }; then
  echo "release build failed" >&2; fatal=1
fi

step "build (ASan + UBSan)"
if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false && meson compile -C build-asan; then
  step "unit and integration tests under ASan/UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --suite unit --suite integration --no-suite load \
      --num-processes 2
  tally build-asan
else
  echo "ASan build failed" >&2; fatal=1
fi

step "build (libFuzzer)"
# Only the fuzz targets are built here (the rest is built and tested above).
fuzz_targets() {
  meson introspect build-fuzz --targets | python3 -c '
import json, sys
print(" ".join(sorted(t["name"] for t in json.load(sys.stdin) if t["name"].startswith("fuzz_"))))'
}
if CC=clang setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false &&
   targets=$(fuzz_targets) && [[ -n $targets ]] && meson compile -C build-fuzz $targets; then
  step "fuzz targets, ${LFE_FUZZ_SECONDS:-8} s each"
  LFE_FUZZ_SECONDS=${LFE_FUZZ_SECONDS:-8} meson test -C build-fuzz --no-rebuild --print-errorlogs --suite fuzz --num-processes 2
  tally build-fuzz
else
  echo "fuzz build failed" >&2; fatal=1
fi

step "done"
echo "${passed} passed, ${failed} failed"
if ((failed > 0 || fatal > 0 || passed == 0)); then
  exit 1
fi
