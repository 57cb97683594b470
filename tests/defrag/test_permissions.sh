#!/usr/bin/env bash
# With -o allow_other, an unprivileged user (uid 65534) may defragment its
# own files only: its own file improves; writing the defrag file of root's
# file fails with EACCES and moves nothing; a job it runs on its directory
# leaves root's file there as skipped_not-owner, unchanged.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd setpriv
setup_image 256

U=65534
as_user() {
	setpriv --reuid=$U --regid=$U --clear-groups -- "$@"
}

mkdir -p "$SRC/shared"
"$MKFRAG" frag "$SRC/shared" f 4 2048 16     # 128 runs each
mv "$SRC/shared/f0" "$SRC/shared/mine"
mv "$SRC/shared/f1" "$SRC/shared/mine2"
mv "$SRC/shared/f2" "$SRC/shared/roots"
chown $U:$U "$SRC/shared" "$SRC/shared/mine" "$SRC/shared/mine2"
chmod 0777 "$SRC/shared"
chmod 0644 "$SRC/shared/roots" "$SRC/shared/mine" "$SRC/shared/mine2" "$SRC/shared/f3"
sync
root_sha=$("${FSNAP[@]}" sha "$SRC/shared/roots")
root_recs=$(filefrag_records "$SRC/shared/roots")
mine_sha=$("${FSNAP[@]}" sha "$SRC/shared/mine")
mine_runs=$(filefrag_count "$SRC/shared/mine")

start_e4infofs -o allow_other
findmnt -n -o OPTIONS "$MNT" | grep -q allow_other || fail "allow_other not in the mount options"

# The user can reach the mount and sees the owners.
check_eq "$(as_user stat -c %u "$MNT/shared/mine/defrag")" $U "owner of mine/defrag"
check_eq "$(as_user stat -c %u "$MNT/shared/roots/defrag")" 0 "owner of roots/defrag"
as_user cat "$MNT/shared/roots/defrag" >/dev/null || fail "uid $U cannot read the status of a file it can read"

# Its own file: allowed, improved.
out=$(as_user bash -c 'echo 1 > "$1"' _ "$MNT/shared/mine/defrag" 2>&1) ||
	fail "uid $U: echo 1 > mine/defrag failed: $out"
log "mine: $(tr '\n' ' ' <"$MNT/shared/mine/defrag")"
check_eq "$(dkey "$MNT/shared/mine/defrag" improved)" 1 "mine: improved"
runs=$(filefrag_count "$SRC/shared/mine")
[ "$runs" -lt "$mine_runs" ] || fail "mine: runs $mine_runs -> $runs"
check_eq "$("${FSNAP[@]}" sha "$SRC/shared/mine")" "$mine_sha" "mine: checksum"

# Root's file: EACCES at open, nothing moved, no job recorded.
if out=$(as_user bash -c 'echo 1 > "$1"' _ "$MNT/shared/roots/defrag" 2>&1); then
	fail "uid $U could start a job on root's file"
fi
[[ $out == *"Permission denied"* ]] || fail "roots/defrag as uid $U: expected EACCES, got: $out"
# Also with an open for writing that does not truncate (no shell).
out=$(as_user /usr/bin/python3 -c '
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY)
    os.write(fd, b"1")
    print("written")
except OSError as e:
    print(errno.errorcode[e.errno])
' "$MNT/shared/roots/defrag")
check_eq "$out" EACCES "O_WRONLY open of roots/defrag as uid $U"
check_eq "$(dkey "$MNT/shared/roots/defrag" state)" idle "roots: state"
check_eq "$("${FSNAP[@]}" sha "$SRC/shared/roots")" "$root_sha" "roots: checksum"
check_eq "$(filefrag_records "$SRC/shared/roots")" "$root_recs" "roots: extents"

# Its directory (owned by it, mode 0777): a job runs; root's files there are
# skipped as not-owner and left alone.
f3_recs=$(filefrag_records "$SRC/shared/f3")
out=$(as_user bash -c 'echo 1 > "$1"' _ "$MNT/shared/defrag" 2>&1) ||
	fail "uid $U: echo 1 > shared/defrag failed: $out"
status=$(cat "$MNT/shared/defrag")
log "shared: $(tr '\n' ' ' <<<"$status")"
check_eq "$(dkey "$MNT/shared/defrag" state)" "done" "shared: state"
check_eq "$(dkey "$MNT/shared/defrag" files)" 4 "shared: files"
check_eq "$(dkey "$MNT/shared/defrag" skipped_not-owner)" 2 "shared: skipped_not-owner (roots, f3)"
check_eq "$(dkey "$MNT/shared/defrag" improved)" 1 "shared: improved (mine2)"
check_eq "$(dkey "$MNT/shared/defrag" failed)" 0 "shared: failed"
check_eq "$("${FSNAP[@]}" sha "$SRC/shared/roots")" "$root_sha" "roots: checksum after the dir job"
check_eq "$(filefrag_records "$SRC/shared/roots")" "$root_recs" "roots: extents after the dir job"
check_eq "$(filefrag_records "$SRC/shared/f3")" "$f3_recs" "f3: extents after the dir job"
[ "$(filefrag_count "$SRC/shared/mine2")" -lt 128 ] || fail "mine2 not improved by the dir job"
check "mine2 content" "$MKFRAG" verify frag "$SRC/shared/mine2" 1
check "roots content" "$MKFRAG" verify frag "$SRC/shared/roots" 2

# Root's directory: the user may not start a job there (EACCES).
if out=$(as_user bash -c 'echo 1 > "$1"' _ "$MNT/defrag" 2>&1); then
	fail "uid $U could start a job on root's directory"
fi
[[ $out == *"Permission denied"* ]] || fail "/defrag as uid $U: expected EACCES, got: $out"

# Root may defragment the user's and its own files.
echo 1 >"$MNT/shared/roots/defrag" || fail "root: echo 1 > roots/defrag failed"
check_eq "$(dkey "$MNT/shared/roots/defrag" improved)" 1 "roots: improved by root"
check_eq "$("${FSNAP[@]}" sha "$SRC/shared/roots")" "$root_sha" "roots: checksum after root's job"

stop_e4infofs
log "ok"
