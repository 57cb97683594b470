#!/usr/bin/env bash
# Bad input to the trigger files: huge writes (1 MiB), binary bytes, words
# split across writes ("1" then "\n": the first write runs the job, the
# newline does nothing; "c" then "ancel": EINVAL each), writes at non-zero
# offsets, junk to the jobs file, writes to attribute files that are not
# triggers, and 10 writers of "1" on one node at once (exactly one job runs,
# the other nine get EBUSY). Each has a defined errno; junk does nothing
# (the target file's layout and checksum stay, no job is logged for it),
# and the daemon answers throughout.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
setup_image 384

mkdir -p "$SRC/d" "$SRC/p"
"$MKFRAG" frag "$SRC/d" f 3 2048 16      # 3 x 2 MiB, 128 runs each
"$MKFRAG" frag "$SRC/p" big 2 65536 16   # 2 x 64 MiB, 4096 runs each
sync
f0=$SRC/d/f0
f0_recs=$(filefrag_records "$f0")
f0_sha=$("${FSNAP[@]}" sha "$f0")
f0_ino=$(stat -c %i "$f0")
d_ino=$(stat -c %i "$SRC/d")
start_e4infofs
D0=$MNT/d/f0/defrag
DD=$MNT/d/defrag

# expect WHAT EXPECTED HW-ARGS...: hw.py's answer must be EXPECTED.
expect() {
	local what=$1 want=$2 got
	shift 2
	got=$("${HW[@]}" "$@" 2>&1) || fail "$what: hw.py failed: $got"
	check_eq "$got" "$want" "$what"
	log "$what: $got"
	alive "after $what"
}

# ---- huge and binary writes ----------------------------------------------------
head -c 1048576 /dev/zero | tr '\0' '1' >"$T/ones.1m"
head -c 1048576 /dev/urandom >"$T/rand.1m"
head -c 4096 /dev/urandom >"$T/rand.4k"
head -c 64 /dev/zero | tr '\0' ' ' | sed 's/^ /1/' >"$T/w64"   # "1" + 63 blanks
printf '1%64s' '' >"$T/w65"
expect "1 MiB of '1' to a file's defrag" EINVAL writefile "$D0" "$T/ones.1m"
expect "1 MiB of /dev/urandom to a file's defrag" EINVAL writefile "$D0" "$T/rand.1m"
expect "1 MiB of /dev/urandom to a directory's defrag" EINVAL writefile "$DD" "$T/rand.1m"
expect "4 KiB of /dev/urandom" EINVAL writefile "$D0" "$T/rand.4k"
expect "64 bytes ('1' + blanks)" EINVAL writefile "$D0" "$T/w64"
expect "65 bytes" EINVAL writefile "$D0" "$T/w65"
# The same through a shell, which opens with O_TRUNC.
out=$( { head -c 1048576 /dev/urandom >"$D0"; } 2>&1) && fail "1 MiB of binary through 'cat > defrag' succeeded"
[[ $out == *"Invalid argument"* ]] || fail "1 MiB of binary through the shell: expected EINVAL, got: $out"
log "1 MiB through the shell (O_TRUNC): $out"
for junk in '\x00' '1\x00' '\x001' '1\n\n' ' 1' '1 ' '\n' '\r\n' '1\r\n' 'START' 'Cancel' \
	'cancel\r\n' '01' '-1' '2' 'yes' '1\t' '\xff\xfe1' 'start\x00cancel'; do
	expect "write '$junk'" EINVAL write "$D0" "$junk"
done

# ---- words split across writes ---------------------------------------------------
expect "'c' then 'ancel' (two writes)" "EINVAL EINVAL" write "$D0" c ancel
expect "'can' then 'cel\\n' (two writes)" "EINVAL EINVAL" write "$D0" can 'cel\n'
expect "'st' then 'art' (two writes)" "EINVAL EINVAL" write "$D0" st art
# "1" then "\n" on another file: the first write runs the job to its end, the
# lone newline (offset 1) does nothing.
f1_ino=$(stat -c %i "$SRC/d/f1")
f1_sha=$("${FSNAP[@]}" sha "$SRC/d/f1")
expect "'1' then '\\n' (two writes) on f1" "ok:1 ok:1" write "$MNT/d/f1/defrag" 1 '\n'
check_eq "$(dkey "$MNT/d/f1/defrag" state)" "done" "f1: state after '1' + '\\n'"
check_eq "$(dkey "$MNT/d/f1/defrag" improved)" 1 "f1: improved after '1' + '\\n'"
check_eq "$("${FSNAP[@]}" sha "$SRC/d/f1")" "$f1_sha" "f1: checksum"
# "cancel" then "\n" with no job: nothing, success.
expect "'cancel' then '\\n' without a job" "ok:6 ok:1" write "$D0" cancel '\n'

# ---- writes at non-zero offsets --------------------------------------------------
expect "pwrite '1\\n' at 10" EINVAL write "$D0" --off 10 '1\n'
expect "pwrite '1' at 1" EINVAL write "$D0" --off 1 '1'
expect "pwrite 'cancel' at 10" EINVAL write "$D0" --off 10 cancel
expect "pwrite '1' at 4096 (the reported size)" EINVAL write "$D0" --off 4096 1
expect "pwrite '1' at 1 GiB" EINVAL write "$D0" --off 1073741824 1
expect "pwrite '\\n' at 10 (a lone newline: nothing)" ok:1 write "$D0" --off 10 '\n'
expect "pwrite 1 MiB of '1' at 10" EINVAL writefile "$D0" "$T/ones.1m" --off 10
# An empty write: the kernel answers it without asking the daemon.
expect "empty write" ok:0 write "$D0" ''

# ---- the jobs file ---------------------------------------------------------------
for junk in '1' 'start' '1\n' 'cancel now' '\x00' 'stop'; do
	expect "write '$junk' to jobs" EINVAL write "$MNT/jobs" "$junk"
done
expect "1 MiB of /dev/urandom to jobs" EINVAL writefile "$MNT/jobs" "$T/rand.1m"
expect "pwrite 'cancel' at 10 to jobs" EINVAL write "$MNT/jobs" --off 10 cancel
expect "'cancel' to jobs without jobs" ok:6 write "$MNT/jobs" cancel

# ---- attribute files that are not triggers ---------------------------------------
for a in score stats stats.json extents; do
	expect "open f0/$a for writing" EROFS open "$MNT/d/f0/$a" w
	expect "open f0/$a O_RDWR" EROFS open "$MNT/d/f0/$a" rw
	expect "open f0/$a O_RDONLY|O_TRUNC" EROFS open "$MNT/d/f0/$a" r,trunc
done
expect "open report for writing" EROFS open "$MNT/d/report" w
expect "open metrics for writing" EROFS open "$MNT/metrics" w

# ---- nothing was done ----------------------------------------------------------
check_eq "$(dkey "$D0" state)" idle "f0: state after the junk"
check_eq "$(dkey "$DD" state)" idle "d: state after the junk"
check_eq "$(filefrag_records "$f0")" "$f0_recs" "f0: layout after the junk"
check_eq "$("${FSNAP[@]}" sha "$f0")" "$f0_sha" "f0: checksum after the junk"
check_eq "$(grep -cE "defrag of inode ($f0_ino|$d_ino):" "$T/daemon.log" || true)" 0 "jobs logged for f0 or d"
check_eq "$(grep -cE "defrag of inode $f1_ino:" "$T/daemon.log" || true)" 1 "jobs logged for f1 ('1' then '\\n')"

# ---- 10 writers of "1" on one node at once ---------------------------------------
B=$MNT/p/big0/defrag
big_sha=$("${FSNAP[@]}" sha "$SRC/p/big0")
big_ino=$(stat -c %i "$SRC/p/big0")
drop_caches
pids=()
for i in $(seq 10); do
	(
		while [ ! -e "$T/go" ]; do sleep 0.005; done
		echo 1 1<>"$B"
	) 2>"$T/par.$i.err" &
	pids+=($!)
done
sleep 0.3
t0=$(now_s)
touch "$T/go"
ok=0 busy=0 other=""
for i in $(seq 10); do
	if wait "${pids[$((i - 1))]}"; then
		ok=$((ok + 1))
	elif grep -q "Device or resource busy" "$T/par.$i.err"; then
		busy=$((busy + 1))
	else
		other+="$(cat "$T/par.$i.err") "
	fi
done
log "10 parallel 'echo 1 1<> defrag': $ok succeeded, $busy EBUSY, other: '${other}' ($(elapsed_ms "$t0") ms)"
[ -z "$other" ] || fail "parallel writers: unexpected errors: $other"
check_eq "$ok" 1 "parallel writers that ran a job"
check_eq "$busy" 9 "parallel writers that got EBUSY"
check_eq "$(grep -cE "defrag of inode $big_ino:" "$T/daemon.log" || true)" 1 "jobs logged for big0"
check_eq "$(dkey "$B" improved)" 1 "big0: improved"
check_eq "$("${FSNAP[@]}" sha "$SRC/p/big0")" "$big_sha" "big0: checksum"
check "big1 content" "$MKFRAG" verify frag "$SRC/p/big1" 1
alive "at the end"
check_eq "$(tail -n +2 "$MNT/jobs")" "" "jobs left running"
stop_e4infofs
log "ok"
