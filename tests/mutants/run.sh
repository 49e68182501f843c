#!/usr/bin/env bash
# tests/mutants/run.sh — plant each one-line bug of mutants.txt in a scratch
# copy of the tree, build, run the tests named for it, and count how many
# the tests catch. Run by hand (not in CI), after changing any file the list
# names, so the change is checked the way the list was:
#
#   tests/mutants/run.sh                 # every mutant
#   tests/mutants/run.sh ID...           # only these
#   tests/mutants/run.sh --list          # ids, files, tests
#   MUTANT_REV=HEAD~3 tests/mutants/run.sh   # the tree of a commit instead
#
# The scratch copy is the working tree as it is (tracked and untracked,
# not ignored files; or the commit $MUTANT_REV) in $MUTANT_DIR (default /tmp/lfe-mutants-$UID), with
# one build directory reused across mutants and runs: only what a mutant
# touches is rebuilt. Before the first mutant, every named test must pass
# on the unchanged tree (else the count means nothing and the run stops).
#
# Integration tests (daemon_*) need root and DPDK like any run of them;
# set LFE_NS_TAG as for a manual run. A test named in the list that the
# build does not have is reported and skipped; a mutant left with no test
# to run counts as survived.
#
# Output: one line per mutant (CAUGHT, SURVIVED, NOAPPLY when its line is
# no longer found in its function — update the list —, BUILDFAIL), then
# "caught N/M". Exit status 0 when all applied mutants were caught.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
list=${MUTANT_LIST:-$here/mutants.txt}
work=${MUTANT_DIR:-/tmp/lfe-mutants-$(id -u)}
jobs=${MUTANT_JOBS:-2}
py=$here/mutate.py

if [[ ${1:-} == --list ]]; then
	exec python3 "$py" list "$list"
fi

rev=${MUTANT_REV:-}
mkdir -p "$work/snap" "$work/src" "$work/log"
cp "$list" "$work/mutants.txt"      # the list as it was when the run began
list=$work/mutants.txt
echo "copying ${rev:-the working tree} of $root -> $work/src" >&2
python3 "$py" sync "$root" "$work/snap" "$work/src" $rev
if [[ ! -f $work/build/build.ninja ]]; then
	meson setup "$work/build" "$work/src" >"$work/log/setup.log" 2>&1 ||
		{ echo "meson setup failed: $work/log/setup.log" >&2; exit 2; }
fi
echo "building the unchanged tree" >&2
ninja -C "$work/build" -j "$jobs" >"$work/log/build.log" 2>&1 ||
	{ echo "the unchanged tree does not build: $work/log/build.log" >&2; exit 2; }

mapfile -t have < <(meson test -C "$work/build" --list 2>/dev/null | sed 's/^.* \/ //')
declare -A known=()
for t in "${have[@]}"; do known[$t]=1; done

ids=("$@")
[[ ${#ids[@]} -gt 0 ]] || mapfile -t ids < <(python3 "$py" ids "$list")

# tests of one mutant that this build has (missing ones reported once)
tests_of() {
	local t out=()
	for t in $(python3 "$py" tests "$list" "$1"); do
		if [[ -n ${known[$t]:-} ]]; then out+=("$t"); else echo "  ($1: no test named $t here)" >&2; fi
	done
	echo "${out[@]:-}"
}

run_tests() {    # log, [--maxfail 1], tests...
	local log=$1; shift
	meson test -C "$work/build" --no-rebuild --print-errorlogs "$@" >"$log" 2>&1
}

declare -A base=()
for id in "${ids[@]}"; do for t in $(tests_of "$id" 2>/dev/null); do base[$t]=1; done; done
if [[ ${#base[@]} -gt 0 ]]; then
	echo "baseline: ${!base[*]}" >&2
	run_tests "$work/log/baseline.log" "${!base[@]}" ||
		{ echo "named tests fail on the unchanged tree: $work/log/baseline.log" >&2; exit 2; }
fi

caught=0 total=0 survived=() other=()
for id in "${ids[@]}"; do
	file=$(python3 "$py" file "$list" "$id")
	if ! python3 "$py" apply "$list" "$id" "$work/snap" "$work/src"; then
		echo "NOAPPLY   $id" ; other+=("$id (does not apply)"); continue
	fi
	log=$work/log/$id.log
	total=$((total + 1))
	if ! ninja -C "$work/build" -j "$jobs" >"$log" 2>&1; then
		echo "BUILDFAIL $id"; other+=("$id (does not build)"); total=$((total - 1))
	else
		read -r -a ts <<<"$(tests_of "$id")"
		if [[ ${#ts[@]} -eq 0 ]]; then
			echo "SURVIVED  $id (no test to run)"; survived+=("$id")
		elif run_tests "$log" --maxfail 1 "${ts[@]}"; then
			echo "SURVIVED  $id [${ts[*]}]"; survived+=("$id")
		else
			echo "CAUGHT    $id [$(grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR)' "$log" |
				sed -E 's|.* / ([^ ]+) .*|\1|' | sort -u | tr '\n' ' ' | sed 's/ $//')]"
			caught=$((caught + 1))
		fi
	fi
	python3 "$py" restore "$work/snap" "$work/src" "$file"
done
ninja -C "$work/build" -j "$jobs" >"$work/log/build.log" 2>&1 || true
echo "caught $caught/$total"
[[ ${#survived[@]} -eq 0 ]] || echo "survived: ${survived[*]}"
[[ ${#other[@]} -eq 0 ]] || printf 'not counted: %s\n' "${other[@]}"
[[ ${#survived[@]} -eq 0 && ${#other[@]} -eq 0 ]]
