#!/usr/bin/env bash
# --version on all three programs; ldapfe --help and ldapfe-gen --help print
# their own options without starting EAL (no hugepages, no root needed:
# EAL would fail or print only its own options).
# Usage: test_cli.sh LDAPFE LDAPFECTL LDAPFE_GEN VERSION
set -euo pipefail
ldapfe=$1 ctl=$2 gen=$3 ver=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
eq() { [[ "$2" == "$3" ]] || fail "$1: got '$2', want '$3'"; echo "ok: $1"; }

eq "ldapfe --version" "$("$ldapfe" --version)" "ldapfe $ver"
eq "ldapfe -- --version (after EAL args)" "$("$ldapfe" -l 0 --no-huge -- --version)" "ldapfe $ver"
eq "ldapfectl --version" "$("$ctl" --version)" "ldapfectl $ver"
eq "ldapfe-gen --version" "$("$gen" --version)" "ldapfe-gen $ver"
h=$("$ldapfe" --help 2>&1)
grep -q -- "--config FILE" <<<"$h" || fail "ldapfe --help lacks --config: $h"
grep -q -- "--stats-interval" <<<"$h" || fail "ldapfe --help lacks --stats-interval"
grep -q "EAL" <<<"$h" || fail "ldapfe --help lacks the pointer to EAL's options"
grep -q "EAL: " <<<"$h" && fail "ldapfe --help started EAL: $h"
echo "ok: ldapfe --help"
h=$("$gen" --help 2>&1)
grep -q -- "--workload" <<<"$h" || fail "ldapfe-gen --help lacks --workload: $h"
grep -q "EAL: " <<<"$h" && fail "ldapfe-gen --help started EAL: $h"
echo "ok: ldapfe-gen --help"
h=$("$ctl" --help)
for c in status stats conns reload drain top; do
	grep -q "^  $c" <<<"$h" || fail "ldapfectl --help lacks $c"
done
echo "ok: ldapfectl --help lists the daemon commands"
