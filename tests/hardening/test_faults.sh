#!/usr/bin/env bash
# Faults during jobs. Each case ends with every file intact (mkfrag's
# pattern), the daemon alive or cleanly exited, e2fsck -fn clean.
#  (a) ENOSPC: the filesystem is filled by another process while a subtree
#      job runs: the job ends (success with no-space skips, or EIO).
#  (b) the source is remounted read-only during a job: ext4 refuses while
#      a file is open for writing (EBUSY), so mount(2) is retried in a tight
#      loop until it passes between two files; the job then ends with a
#      clear state (the writer: success with read-only skips, EROFS or
#      EIO), and a new job gets EROFS.
#  (c) the file of a single-file job is deleted, truncated, renamed, or
#      replaced by a symlink to another file mid-move: a clear result, no
#      crash, the other files intact, the symlink's target untouched.
#  (d) the source is unmounted lazily (umount -l) under the daemon, during
#      a job: reads answer (figures or errors), the daemon exits cleanly at
#      fusermount3 -u.
#  (e) fusermount3 -u of the e4infofs mount while a job runs (refused:
#      EBUSY, the job goes on), then umount -l of it (the job runs to its
#      end, its writer gets its result, then the daemon exits cleanly);
#      SIGTERM to the daemon during a job (the job stops, the daemon
#      unmounts and exits).
# E4INFO_FAULTS=abcde selects cases (all by default).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
CASES=${E4INFO_FAULTS:-abcde}
setup_image 768

# new_fs NAME SIZE_MIB: an ext4 image of its own, mounted on $T/NAME.src;
# sets FS_DIR and FS_DEV.
new_fs() {
	truncate -s "$2M" "$T/$1.img"
	mkfs.ext4 -q -F "$T/$1.img"
	mount_image "$T/$1.img" "$T/$1.src"
	FS_DIR=$T/$1.src
	FS_DEV=$_MI_DEV
}
fsck_clean() { # fsck_clean DEV WHAT: e2fsck -fn of an unmounted DEV
	local out
	out=$(e2fsck -fn "$1" 2>&1) || { echo "$out" >&2; fail "$2: e2fsck -fn found problems"; }
}
# verify_frag DIR PREFIX COUNT: mkfrag's pattern in DIR/PREFIX0 ...
verify_frag() {
	local i
	for ((i = 0; i < $3; i++)); do
		check "$1/$2$i content" "$MKFRAG" verify frag "$1/$2$i" "$i"
	done
}
oneline() { tr '\n' ' ' <"$1"; }

# ---- (a) ENOSPC during a job -------------------------------------------------
case_a() {
	new_fs a 256
	local A=$FS_DIR dev=$FS_DEV m=$T/a.mnt pid rc=0
	mkdir "$A/d"
	"$MKFRAG" frag "$A/d" f 8 12288 16      # 8 x 12 MiB, 768 runs each
	mount_e4infofs "$A" "$m"
	pid=$LAST_PID
	drop_caches
	( echo 1 >"$m/defrag" ) 2>"$T/a.err" &
	local job=$!
	wait_moving "$m/defrag"
	# Another process takes every free block (root: the reserve too).
	python3 - "$A/fill" <<-'EOF'
		import os, sys
		fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
		off, chunk = 0, 64 << 20
		while chunk >= 4096:
		    try:
		        os.posix_fallocate(fd, off, chunk)
		        off += chunk
		    except OSError:
		        chunk //= 2
		os.close(fd)
	EOF
	local full
	full=$(df --output=avail -B1 "$A" | tail -n 1)
	wait "$job" || rc=$?
	log "(a) ENOSPC: filled (avail $full bytes) while the job ran; writer status $rc $(cat "$T/a.err"); $(oneline "$m/defrag")"
	local st
	st=$(dkey "$m/defrag" state)
	if [ "$rc" = 0 ]; then
		check_eq "$st" "done" "(a) state after a successful job"
		[ "$(dkey "$m/defrag" skipped_no-space)" -ge 1 ] || log "(a) note: no file was skipped for no-space (the fill came after the last donor)"
	else
		grep -q "Input/output error" "$T/a.err" || fail "(a) the job's writer: expected success or EIO, got $(cat "$T/a.err")"
		check_eq "$st" failed "(a) state after EIO"
	fi
	verify_frag "$A/d" f 8
	alive_at "$m" "(a) after ENOSPC"
	rm -f "$A/fill"
	echo 1 >"$m/defrag" || fail "(a) a job after freeing space failed: $(oneline "$m/defrag")"
	verify_frag "$A/d" f 8
	stop_e4infofs "$m"
	umount "$A"
	fsck_clean "$dev" "(a)"
	mount "$dev" "$A"
}

# alive_at MNT MSG: MNT's score answers.
alive_at() {
	local out
	out=$(timeout 20 cat "$1/score" 2>&1) || fail "$2: cat score failed: $out"
	[[ $out =~ ^[0-9]+$ ]] || fail "$2: score '$out'"
}

# ---- (b) the source remounted read-only during a job ----------------------------
case_b() {
	new_fs b 640
	local B=$FS_DIR dev=$FS_DEV m=$T/b.mnt rc=0
	mkdir "$B/d"
	# 32 x 8 MiB, 512 runs each: a job of ~2 s on a fast disk (12 files
	# took 0.7 s there, and the remount came only after the job)
	"$MKFRAG" frag "$B/d" f 32 8192 16
	mount_e4infofs "$B" "$m" -o defrag_threads=1
	drop_caches
	( echo 1 >"$m/defrag" ) 2>"$T/b.err" &
	local job=$!
	wait_moving "$m/defrag"
	# mount(2) in a tight loop: the gaps between two files are short.
	local out during
	out=$("${HW[@]}" remount_ro "$B" 20)
	during=$(oneline "$m/defrag")
	wait "$job" || rc=$?
	log "(b) remount,ro: $out (result tries ms); the job then: $during"
	log "(b) writer status $rc $(cat "$T/b.err"); $(oneline "$m/defrag")"
	[[ $out == ok* ]] || fail "(b) the source could not be remounted read-only during the job: $out"
	# Proof that it came during the job: files skipped as read-only, or an error.
	[ "$(dkey "$m/defrag" skipped_read-only)" -ge 1 ] || [ "$rc" != 0 ] ||
		fail "(b) the remount came only after the job: $(oneline "$m/defrag")"
	out=$(touch "$B/probe" 2>&1) && fail "(b) the source is writable after the remount"
	[[ $out == *"Read-only file system"* ]] || fail "(b) touch on the read-only source: $out"
	case $(dkey "$m/defrag" state) in
	done | failed | cancelled) ;;
	*) fail "(b) state after the read-only remount: $(dkey "$m/defrag" state)" ;;
	esac
	if [ "$rc" != 0 ]; then
		grep -qE "Read-only file system|Input/output error" "$T/b.err" ||
			fail "(b) the writer: expected success, EROFS or EIO, got $(cat "$T/b.err")"
	fi
	verify_frag "$B/d" f 32
	alive_at "$m" "(b) read-only"
	# A new job on the read-only source: EROFS.
	out=$( { echo 1 >"$m/d/defrag"; } 2>&1) && fail "(b) a job on the read-only source succeeded"
	[[ $out == *"Read-only file system"* ]] || fail "(b) a job on the read-only source: expected EROFS, got $out"
	log "(b) a new job on the read-only source: $out"
	stop_e4infofs "$m"
	umount "$B"
	fsck_clean "$dev" "(b)"
	# (mounted read-write again, for the cleanup)
	mount "$dev" "$B"
}

# ---- (c) the file of a single-file job changes mid-move --------------------------
# (The files are made before any job: the free space a job leaves behind
# would let mkfrag's files come out nearly contiguous.)
setup_c() {
	local how
	mkdir -p "$SRC/c"
	"$MKFRAG" frag "$SRC/c" victim 2 1024 4      # the symlink's target
	for how in delete truncate rename symlink; do
		mkdir -p "$SRC/c/$how"
		"$MKFRAG" frag "$SRC/c/$how" big 2 32768 8    # 2 x 32 MiB, 4096 runs each
	done
}
case_c() {
	local how d f out rc st now
	local victim_recs victim_sha
	victim_recs=$(filefrag_records "$SRC/c/victim0")
	victim_sha=$("${FSNAP[@]}" sha "$SRC/c/victim0")
	for how in delete truncate rename symlink; do
		d=$SRC/c/$how
		f=$d/big0
		local runs0
		runs0=$(filefrag_count "$f")
		drop_caches
		( echo 1 >"$MNT/c/$how/big0/defrag" ) 2>"$T/c.$how.err" &
		local job=$!
		wait_moving "$MNT/c/$how/big0/defrag"
		case $how in
		delete) rm "$f" ;;
		truncate) truncate -s 1M "$f" ;;
		rename) mv "$f" "$d/big0.renamed" ;;
		symlink) mv "$f" "$d/big0.away" && ln -s ../victim0 "$f" ;;
		esac
		rc=0
		wait "$job" || rc=$?
		case $how in   # its status, under its name now
		rename) now=big0.renamed ;;
		symlink) now=big0.away ;;
		*) now=big0 ;;
		esac
		st=$(oneline "$MNT/c/$how/$now/defrag" 2>&1) || st="(no status: the node is gone)"
		log "(c) $how mid-move ($runs0 runs before): writer status $rc $(cat "$T/c.$how.err"); $st"
		alive "(c) after $how"
		check "(c) $how: big1 content" "$MKFRAG" verify frag "$d/big1" 1
		case $how in
		delete) [ ! -e "$f" ] || fail "(c) the deleted file is back" ;;
		truncate)
			check_eq "$(stat -c %s "$f")" 1048576 "(c) size of the truncated file"
			check "(c) truncated file's content" "$MKFRAG" verify frag "$f" 0
			# the range the job was moving is past the end now: a change, not a failure
			case $st in *failed:\ 1*) fail "(c) truncate mid-move counted as a failure: $st" ;; esac
			;;
		rename) check "(c) renamed file's content" "$MKFRAG" verify frag "$d/big0.renamed" 0 ;;
		symlink)
			check "(c) replaced file's content" "$MKFRAG" verify frag "$d/big0.away" 0
			[ -L "$f" ] || fail "(c) the symlink is gone"
			;;
		esac
		# A clear result: a final state, and the writer's errno one of the table's.
		if [ "$rc" != 0 ]; then
			grep -qE "Input/output error|Operation canceled|No such file|Stale file handle" "$T/c.$how.err" ||
				fail "(c) $how: unexpected error for the writer: $(cat "$T/c.$how.err")"
		fi
	done
	check_eq "$(filefrag_records "$SRC/c/victim0")" "$victim_recs" "(c) layout of the symlink's target"
	check_eq "$("${FSNAP[@]}" sha "$SRC/c/victim0")" "$victim_sha" "(c) content of the symlink's target"
	check "(c) victim1 content" "$MKFRAG" verify frag "$SRC/c/victim1" 1
}

# ---- (d) the source unmounted lazily under the daemon ------------------------------
case_d() {
	new_fs d 256
	local D=$FS_DIR dev=$FS_DEV m=$T/d.mnt rc=0 a out results=""
	mkdir "$D/d"
	"$MKFRAG" frag "$D/d" f 4 16384 16     # 4 x 16 MiB
	mount_e4infofs "$D" "$m"
	local pid=$LAST_PID
	cat "$m/score" >/dev/null
	drop_caches
	( echo 1 >"$m/defrag" ) 2>"$T/d.err" &
	local job=$!
	wait_moving "$m/defrag"
	umount -l "$D" || fail "(d) umount -l of the source failed"
	_is_mounted "$D" && fail "(d) the source is still mounted after umount -l"
	wait "$job" || rc=$?
	log "(d) source unmounted lazily during a job: writer status $rc $(cat "$T/d.err"); $(oneline "$m/defrag")"
	for a in score stats extents report freespace metrics d/score d/f0/extents d/f1/stats; do
		out=$(timeout 20 cat "$m/$a" 2>&1 | head -n 1) || true
		results+="$a: ${out:-(empty)}; "
	done
	out=$( { timeout 30 bash -c 'echo 1 > "$1"' _ "$m/d/defrag"; } 2>&1) && out="ok"
	results+="new job: $out; ls: $(timeout 20 ls "$m/d" 2>&1 | tr '\n' ' ')"
	log "(d) reads after umount -l: $results"
	kill -0 "$pid" 2>/dev/null || fail "(d) the daemon died after the lazy unmount of its source"
	stop_e4infofs "$m"
	# The filesystem is gone once the daemon closed its last descriptor.
	for _ in $(seq 50); do
		grep -q "^$dev " /proc/mounts || break
		sleep 0.1
	done
	mount "$dev" "$D" || fail "(d) cannot mount the source again"
	verify_frag "$D/d" f 4
	umount "$D"
	fsck_clean "$dev" "(d)"
	mount "$dev" "$D"
}

# ---- (e) unmounting e4infofs while a job runs ----------------------------------------
setup_e() {
	mkdir -p "$SRC/e"
	"$MKFRAG" frag "$SRC/e" big 2 98304 16    # 2 x 96 MiB, 6144 runs each
}
case_e() {
	local rc=0 out t0 ms
	drop_caches
	( echo 1 >"$MNT/e/big0/defrag" ) 2>"$T/e.err" &
	local job=$!
	wait_moving "$MNT/e/big0/defrag"
	if out=$(fusermount3 -u "$MNT" 2>&1); then
		log "(e) fusermount3 -u during a job: succeeded"
	else
		log "(e) fusermount3 -u during a job: refused: $out"
		_is_mounted "$MNT" || fail "(e) fusermount3 -u failed but the mount is gone"
		check_eq "$(dkey "$MNT/e/big0/defrag" state)" running "(e) state after the refused unmount"
		[[ $out == *"busy"* ]] || fail "(e) fusermount3 -u during a job: expected EBUSY, got $out"
	fi
	t0=$(now_s)
	umount -l "$MNT" || fail "(e) umount -l of the mount failed"
	_is_mounted "$MNT" && fail "(e) still mounted after umount -l"
	wait "$job" || rc=$?
	ms=$(elapsed_ms "$t0")
	_reap "$DAEMON_PID" 30
	log "(e) umount -l during a job: the writer ended $ms ms later with status $rc $(cat "$T/e.err"); the daemon exited with $REAP_STATUS $(elapsed_ms "$t0") ms after umount -l"
	forget_daemon "$DAEMON_PID"
	check_eq "$REAP_STATUS" 0 "(e) the daemon's exit status after umount -l"
	if [ "$rc" != 0 ]; then
		grep -qE "Operation canceled|Software caused connection abort|Transport endpoint" "$T/e.err" ||
			fail "(e) the writer after umount -l: $(cat "$T/e.err")"
	fi
	drop_caches
	check "(e) big0 content" "$MKFRAG" verify frag "$SRC/e/big0" 0
	check "(e) big1 content" "$MKFRAG" verify frag "$SRC/e/big1" 1
	log "(e) big0: $(filefrag_count "$SRC/e/big0") runs (6144 before)"
	# The mount point can be used again.
	start_e4infofs
	alive "(e) a new mount on the same mount point"
	# SIGTERM to the daemon during a job: libfuse ends the session, the
	# job stops at the next chunk, the daemon unmounts and exits.
	drop_caches
	( echo 1 >"$MNT/e/big1/defrag" ) 2>"$T/e3.err" &
	job=$!
	wait_moving "$MNT/e/big1/defrag"
	# An attribute file and a directory open across the signal are never
	# released: the daemon must still free the content and the listing.
	# ASan's leak check fails a daemon that does not free the content; a
	# lost listing it may miss (the handle's value stays in libfuse's
	# buffers, which its conservative scan reads), so unit/handles checks
	# the set that frees both.
	exec 8<"$MNT/e/big1/extents"
	exec 9<"$MNT/e"
	t0=$(now_s)
	kill -TERM "$DAEMON_PID"
	rc=0
	wait "$job" || rc=$?
	ms=$(elapsed_ms "$t0")
	_reap "$DAEMON_PID" 30
	log "(e) SIGTERM to the daemon during a job: the writer ended $ms ms later with status $rc $(cat "$T/e3.err"); the daemon exited with $REAP_STATUS $(elapsed_ms "$t0") ms after the signal"
	forget_daemon "$DAEMON_PID"
	exec 8<&- 9<&-
	# libfuse's loop returns the signal's number after SIGTERM, which the
	# daemon turns into status 1 (as libfuse's examples do).
	[ "$REAP_STATUS" = 0 ] || [ "$REAP_STATUS" = 1 ] || fail "(e) the daemon's exit status after SIGTERM: $REAP_STATUS"
	_is_mounted "$MNT" && fail "(e) the daemon exited after SIGTERM but left its mount"
	if [ "$rc" = 0 ]; then
		log "(e) note: the job ended before SIGTERM was seen"
	else
		grep -qE "Operation canceled|Software caused connection abort|Transport endpoint" "$T/e3.err" ||
			fail "(e) the writer after SIGTERM: $(cat "$T/e3.err")"
	fi
	drop_caches
	check "(e) big1 content after SIGTERM" "$MKFRAG" verify frag "$SRC/e/big1" 1
	start_e4infofs
	alive "(e) a new mount after SIGTERM"
}

[[ $CASES == *c* ]] && setup_c
[[ $CASES == *e* ]] && setup_e
sync
start_e4infofs
for c in a b c d e; do
	[[ $CASES == *$c* ]] || continue
	"case_$c"
	alive "after case ($c)"
done
stop_e4infofs
umount "$SRC"
fsck_clean "$LOOP" "main image"
log "ok"
