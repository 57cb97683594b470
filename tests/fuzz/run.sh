#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time (FUZZ_SECONDS each,
# default 20), after replaying the crashes kept in tests/fuzz/crashes as
# regressions. Seeds: tests/fuzz/corpus/TARGET (kept in the repository;
# --update-corpus adds what the run found). A new crash is saved in
# tests/fuzz/crashes/ and fails the run.
#   tests/fuzz/run.sh BUILD_DIR [--update-corpus]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
update=${2:-}
secs=${FUZZ_SECONDS:-20}
passed=0 failed=0
for target in trigger escape superblock figures; do
	exe=$build/tests/fuzz/fuzz_$target
	[ -x "$exe" ] || { echo "missing $exe (configure with CC=clang -Dfuzz=true)"; exit 1; }
	for crash in "$here"/crashes/"$target"-*; do
		[ -e "$crash" ] || continue
		"$exe" "$crash" >/dev/null 2>&1 || { echo "FAIL fuzz_$target: $crash still crashes"; failed=$((failed + 1)); continue 2; }
	done
	work=$(mktemp -d)
	cp -r "$here/corpus/$target/." "$work/"
	if "$exe" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$here/crashes/$target-" "$work" >"$work.log" 2>&1; then
		echo "ok fuzz_$target: $(grep -o 'Done [0-9]* runs' "$work.log" | tail -1) in ${secs}s"
		passed=$((passed + 1))
		[ "$update" = --update-corpus ] && cp -n "$work"/* "$here/corpus/$target/" 2>/dev/null || true
	else
		echo "FAIL fuzz_$target:"
		tail -n 30 "$work.log"
		failed=$((failed + 1))
	fi
	rm -rf "$work" "$work.log"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
