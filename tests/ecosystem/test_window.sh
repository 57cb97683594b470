#!/usr/bin/env bash
# A nightly window that continues the next night: defrag-high.sh -s 2 on a
# mount whose first directory needs well over 2 s stops that job at the
# end of the window (no failure: exit status 0, "stopped at the end of the
# window"), and the next directory waits; a second run (the next night,
# after the daemon restarted) resumes the first directory with what was
# left ("resumed:" in its status) and does the second: every file ends in
# one run, with the content and times it had.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../defrag/common.sh"
require_root
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
setup_image 2048
mkdir -p "$SRC/a" "$SRC/b"
"$MKFRAG" frag "$SRC/a" f 64 8192 4        # 64 x 8 MiB in 2048 runs: well over 2 s
"$MKFRAG" frag "$SRC/b" g 4 1024 4         # 4 x 1 MiB in 256 runs
snap_before

start_e4infofs -o state_dir="$T/st"
drop_caches
rc=0
out=$("$EX/defrag-high.sh" -s 2 "$MNT" 0) || rc=$?
log "first night: $out"
check_eq "$rc" 0 "exit status of a run the window ended"
grep -q '^a: stopped at the end of the window, [1-9][0-9]* bytes left for the next run' <<<"$out" ||
	fail "a was not stopped by the window: $out"
grep -q '^b: score [0-9]* > 0, waits: the window of 2 s is used up' <<<"$out" || fail "b did not wait: $out"
grep -q ', 1 stopped and 1 waiting at the end of the window$' <<<"$out" || fail "summary: $out"
[ "$(sum_runs "$SRC/b")" -eq 1024 ] || fail "b was touched in the first night"
stop_e4infofs

start_e4infofs -o state_dir="$T/st"
out=$("$EX/defrag-high.sh" -s 600 "$MNT" 0) || fail "the second night failed: $out"
log "second night: $out"
grep -q '^a: done: ' <<<"$out" || fail "a was not finished the second night: $out"
grep -q '^b: done: ' <<<"$out" || fail "b was not done the second night: $out"
resumed=$(dkey "$MNT/a/defrag" resumed)
[ "${resumed:-0}" -ge 1 ] || fail "the second night's job on a did not resume ($(tr '\n' ' ' <"$MNT/a/defrag"))"
stop_e4infofs
check_eq "$(sum_runs "$SRC/a")" 64 "runs of a after two nights"
check_eq "$(sum_runs "$SRC/b")" 4 "runs of b after two nights"
check_snap "the two nights"
# Bad windows are refused before anything is done.
rc=0
"$EX/defrag-high.sh" -s 0 "$SRC" >/dev/null 2>&1 || rc=$?
check_eq "$rc" 2 "defrag-high.sh -s 0"
log "ok: a resumed $resumed files finished the first night"
