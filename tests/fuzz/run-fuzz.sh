#!/usr/bin/env bash
# run-fuzz.sh FUZZER SEED_DIR — run one libFuzzer target for LFE_FUZZ_SECONDS
# (default 20) on a scratch copy of its seed corpus. Exit non-zero on a crash,
# leak, timeout or sanitizer report.
set -euo pipefail
fuzzer=$1 seeds=$2
secs=${LFE_FUZZ_SECONDS:-20}
work=$(mktemp -d /tmp/lfe-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [[ -d $seeds ]]; then cp -r "$seeds"/. "$work/corpus"/ 2>/dev/null || true; fi
cd "$work"
# -error_exitcode=1: libFuzzer's default (77) would read as "skipped" to meson.
set +e
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$work/" corpus 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
set -e
shopt -s nullglob
artifacts=("$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*)
for f in "${artifacts[@]}"; do
  echo "artifact: $(basename "$f") (base64: $(base64 -w0 "$f"))"
done
if ((${#artifacts[@]} > 0 || rc != 0)); then
  exit 1
fi
exit 0
