#!/usr/bin/env bash
# Hostile users on a mount with allow_other, as uid 65534 (U1) and 65533
# (U2), with SOURCE a subdirectory of the ext4 filesystem ($SRC/sub) and
# $SRC/outside beside it:
# - reading: no attribute file of what the user cannot read in the source
#   (root's 0700 directory and what is below it, 0600 files of root and of
#   the other user) opens (EACCES), and no output the user can read names
#   what is below a directory it cannot list;
# - defragmenting: only its own files (EACCES at open of other defrag
#   files, of jobs, of root's directories; not-owner skips in its subtree
#   job), and it cannot cancel root's job;
# - writing: touch/mkdir/rm/mv/ln/chmod/truncate/mkfifo in the mount fail
#   (for root too) and the source tree does not change;
# - escaping SOURCE: symlinks to ../outside, /etc, a file outside, "..",
#   "@.." and friends show nothing; a hard link inside to a file outside is
#   that file (shown, not defragmentable by U1); a loop swapping a
#   directory and a symlink to ../outside under the user's readers and
#   defrag jobs; a directory of the user's moved out of SOURCE while the
#   user holds it open (its cwd). Nothing outside SOURCE may be analysed or
#   moved: the outside files keep their layout (filefrag -v) and content,
#   and no output names them or shows their blocks.
# Violations of the last two points are collected and reported together.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd setpriv
setup_image 384

U1=65534
U2=65533
PY=/usr/bin/python3
VIOLATIONS=()
violation() {
	log "VIOLATION: $*"
	VIOLATIONS+=("$*")
}

# ---- the tree ----------------------------------------------------------------
O=$SRC/outside
S=$SRC/sub
mkdir -p "$O/u1w" "$S/rootdir/deeper" "$S/pub" "$S/u1/U1PRIV" "$S/u2/U2PRIV" "$S/play/d" "$S/play/esc"
"$MKFRAG" frag "$O" OUTSIDE_a 2 1024 4        # 256 runs each
"$MKFRAG" frag "$O" OUTSIDE_hl 2 1024 4
"$MKFRAG" frag "$S/rootdir" HIDDEN_n 2 512 4
"$MKFRAG" frag "$S/rootdir/deeper" HIDDEN_deep 1 512 512
"$MKFRAG" frag "$S" rootfile 2 512 4
"$MKFRAG" frag "$S/pub" rootpub 2 512 4
"$MKFRAG" frag "$S/pub" big 2 32768 16        # 2 x 32 MiB, 2048 runs each
"$MKFRAG" frag "$S/u1" mine 2 512 4
"$MKFRAG" frag "$S/u1" private 2 512 4
"$MKFRAG" frag "$S/u1" rootin 2 512 4
"$MKFRAG" frag "$S/u1/U1PRIV" U1SECRET 2 512 4
"$MKFRAG" frag "$S/u2" theirs 2 512 4
"$MKFRAG" frag "$S/u2/U2PRIV" U2SECRET 2 512 4
"$MKFRAG" frag "$S/play/d" f_in 2 1024 4
"$MKFRAG" frag "$S/play/esc" escf 2 1024 4
rm -f "$S/u1/rootin1" "$S/u1/private1"
ln "$O/OUTSIDE_hl0" "$S/pub/hl"
chmod 0700 "$S/rootdir"
chmod 0600 "$S/rootfile0" "$O/OUTSIDE_a1"
chown -R $U1:$U1 "$S/u1" "$S/play" "$O/u1w" "$O/OUTSIDE_a0"
chown root:root "$S/u1/rootin0"
chmod 0600 "$S/u1/private0"
chmod 0700 "$S/u1/U1PRIV"
chown -R $U2:$U2 "$S/u2"
chmod 0600 "$S/u2/theirs0"
chmod 0700 "$S/u2/U2PRIV"
for l in "../../outside:link-out" "/etc:link-etc" "../../outside/OUTSIDE_a0:link-file" \
	"$O:link-abs" "..:link-dot" ".:link-self" "/etc/passwd:link-passwd"; do
	ln -s "${l%%:*}" "$S/u1/${l##*:}"
done
chown -h $U1:$U1 "$S"/u1/link-*
ln -s ../../../outside "$S/play/l"
chown -h $U1:$U1 "$S/play/l"
sync

# The outside files: layout and content, and every physical block they use.
outside_state() {
	local f
	for f in "$O"/OUTSIDE_*; do
		echo "$(basename "$f") $("${FSNAP[@]}" sha "$f")"
		filefrag_records "$f"
	done
}
outside_state >"$T/outside.before"
for f in "$O"/OUTSIDE_a*; do filefrag_records "$f"; done | awk '{ print $2 }' | sort -u >"$T/outside.blocks"
snap_tree "$S" >"$T/tree.before"

MNT=$T/mnt
# timeout=0: every path walk asks the daemon (more lookups in the race);
# report_top=100: reports list every fragmented file.
mount_e4infofs "$S" "$MNT" -o allow_other -o timeout=0 -o report_top=100
DAEMON_PID=$LAST_PID
findmnt -n -o OPTIONS "$MNT" | grep -q allow_other || fail "allow_other not in the mount options"

# Every output a user reads goes to $T/out.UID too, to be searched at the end.
: >"$T/out.$U1"
: >"$T/out.$U2"
: >"$T/out.0"
# readable UID PATH: UID can read PATH (a number, JSON or text).
readable() {
	local u=$1 p=$2 out
	out=$(as_uid "$u" cat "$p" 2>&1) || fail "uid $u cannot read $p: $out"
	printf '== %s\n%s\n' "${p#"$MNT"/}" "$out" >>"$T/out.$u"
}
# denied UID PATH: reading PATH fails with EACCES.
denied() {
	local u=$1 p=$2 out
	if out=$(as_uid "$u" cat "$p" 2>&1); then
		printf '%s\n' "$out" >>"$T/out.$u"
		fail "uid $u could read $p"
	fi
	[[ $out == *"Permission denied"* ]] || fail "uid $u reading $p: expected EACCES, got: $out"
}
# hw_as UID EXPECTED WHAT HW-ARGS...
hw_as() {
	local u=$1 want=$2 what=$3 got
	shift 3
	got=$(as_uid "$u" $PY "$_HARD_DIR/hw.py" "$@" 2>&1) || fail "$what: hw.py failed: $got"
	check_eq "$got" "$want" "$what (uid $u)"
}

# ---- 1. reading ----------------------------------------------------------------
for a in score stats stats.json extents report defrag; do
	denied "$U1" "$MNT/rootdir/$a"
	denied "$U2" "$MNT/rootdir/$a"
	denied "$U1" "$MNT/u2/U2PRIV/$a"
	denied "$U2" "$MNT/u1/U1PRIV/$a"
done
for a in score stats stats.json extents defrag; do
	for u in $U1 $U2; do
		denied "$u" "$MNT/rootdir/HIDDEN_n0/$a"
		denied "$u" "$MNT/rootdir/deeper/HIDDEN_deep0/$a"
		denied "$u" "$MNT/rootfile0/$a"
	done
	denied "$U1" "$MNT/u2/theirs0/$a"
	denied "$U2" "$MNT/u1/private0/$a"
	denied "$U1" "$MNT/u2/U2PRIV/U2SECRET0/$a"
	readable "$U1" "$MNT/u1/private0/$a"
	readable "$U2" "$MNT/u2/theirs0/$a"
	readable "$U1" "$MNT/rootfile1/$a"
	readable "$U2" "$MNT/pub/rootpub0/$a"
done
out=$(as_uid $U1 ls "$MNT/rootdir" 2>&1) && fail "uid $U1 could list rootdir: $out"
for d in "" u1 u2 pub play; do
	for a in score stats stats.json extents report defrag; do
		readable "$U1" "$MNT/${d:+$d/}$a"
		readable "$U2" "$MNT/${d:+$d/}$a"
	done
done
readable "$U1" "$MNT/metrics"
readable "$U1" "$MNT/jobs"
# first_hit WORD FILE: "attribute file: line" of WORD's first occurrence.
first_hit() {
	awk -v w="$1" '/^== / { f = substr($0, 4); next } index($0, w) { print f ": " $0; exit }' "$2"
}
leaks() { # leaks UID WORD...: outputs read by UID that name WORD
	local u=$1 w n
	shift
	for w; do
		n=$(awk -v w="$w" '/^== / { f = $2; next } index($0, w) { print f }' "$T/out.$u" | sort -u | tr '\n' ' ')
		[ -z "$n" ] || violation "uid $u read names of files below a directory it cannot list ($w...) in: $n(e.g. $(first_hit "$w" "$T/out.$u"))"
	done
}
leaks $U1 HIDDEN_ U2SECRET
leaks $U2 HIDDEN_ U1SECRET
log "reading: checked"

# ---- 2. defragmenting ----------------------------------------------------------
hw_as "$U1" EACCES "root's 0644 file" write "$MNT/rootfile1/defrag" 1
hw_as "$U1" EACCES "root's file in pub" write "$MNT/pub/rootpub0/defrag" 1
hw_as "$U1" EACCES "the hard link of root's outside file" write "$MNT/pub/hl/defrag" 1
hw_as "$U1" EACCES "root's SOURCE" write "$MNT/defrag" 1
hw_as "$U1" EACCES "U2's directory" write "$MNT/u2/defrag" 1
hw_as "$U1" EACCES "the jobs file" write "$MNT/jobs" cancel
hw_as "$U2" EACCES "U1's file" write "$MNT/u1/mine0/defrag" 1
hw_as "$U2" EACCES "U1's directory" write "$MNT/u1/defrag" 1
out=$(as_uid $U1 bash -c 'echo 1 > "$1"' _ "$MNT/rootfile1/defrag" 2>&1) && fail "uid $U1: echo 1 > rootfile1/defrag succeeded"
[[ $out == *"Permission denied"* ]] || fail "uid $U1: echo 1 > rootfile1/defrag: expected EACCES, got $out"
for f in rootfile1 pub/rootpub0 pub/hl; do
	check_eq "$(dkey "$MNT/$f/defrag" state)" idle "$f: state after refused jobs"
done
rootin_recs=$(filefrag_records "$S/u1/rootin0")
out=$(as_uid $U1 bash -c 'echo 1 > "$1"' _ "$MNT/u1/defrag" 2>&1) || fail "uid $U1: its own directory's job failed: $out"
log "U1's job on u1: $(tr '\n' ' ' <"$MNT/u1/defrag")"
check_eq "$(dkey "$MNT/u1/defrag" skipped_not-owner)" 1 "u1 job: skipped_not-owner (rootin0)"
check_eq "$(dkey "$MNT/u1/defrag" improved)" 5 "u1 job: improved (mine0, mine1, private0, U1SECRET0, U1SECRET1)"
check_eq "$(filefrag_records "$S/u1/rootin0")" "$rootin_recs" "rootin0: layout after U1's job"
check "rootin0 content" "$MKFRAG" verify frag "$S/u1/rootin0" 0
# Root's running job: U1 cannot cancel it.
drop_caches
( echo 1 >"$MNT/pub/big0/defrag" ) 2>"$T/rootjob.err" &
rootjob=$!
wait_state "$MNT/pub/big0/defrag" running 10
hw_as "$U1" EACCES "cancel root's job through its defrag" write "$MNT/pub/big0/defrag" cancel
hw_as "$U1" EACCES "cancel through jobs" write "$MNT/jobs" cancel
out=$(as_uid $U1 bash -c 'echo cancel 1<> "$1"' _ "$MNT/pub/big0/defrag" 2>&1) && fail "uid $U1: echo cancel 1<> root's defrag succeeded"
running=$(dkey "$MNT/pub/big0/defrag" state)
wait "$rootjob" || fail "root's job failed (cancelled by uid $U1?): $(cat "$T/rootjob.err")"
log "root's job (state '$running' while U1 tried to cancel): $(tr '\n' ' ' <"$MNT/pub/big0/defrag")"
check_eq "$(dkey "$MNT/pub/big0/defrag" state)" "done" "root's job after U1's cancels"
check "big0 content" "$MKFRAG" verify frag "$S/pub/big0" 0
log "defragmenting: checked"

# ---- 3. writing ----------------------------------------------------------------
# must_fail UID WHAT CMD...: CMD as UID fails.
must_fail() {
	local u=$1 what=$2 out
	shift 2
	if out=$(as_uid "$u" "$@" 2>&1); then
		fail "uid $u could $what"
	fi
	echo "$u $what: $out" >>"$T/writes.log"
}
for u in $U1 0; do
	must_fail "$u" "touch a new name" touch "$MNT/u1/new"
	must_fail "$u" "touch a node" touch "$MNT/u1/mine0"
	must_fail "$u" "touch score" touch "$MNT/u1/mine0/score"
	must_fail "$u" "mkdir" mkdir "$MNT/u1/newdir"
	must_fail "$u" "rm -r a file's node" rm -rf "$MNT/u1/mine1"
	must_fail "$u" "rmdir a file's node" rmdir "$MNT/u1/mine1"
	must_fail "$u" "rm an attribute file" rm -f "$MNT/u1/mine0/score"
	must_fail "$u" "mv a node" mv "$MNT/u1/mine0" "$MNT/u1/moved"
	must_fail "$u" "mv a node to another directory" mv "$MNT/u1/mine0" "$MNT/play/moved"
	must_fail "$u" "ln -s" ln -s /etc "$MNT/u1/newlink"
	must_fail "$u" "ln" ln "$MNT/u1/mine0/score" "$MNT/u1/hardlink"
	must_fail "$u" "chmod" chmod 0777 "$MNT/u1/mine0"
	must_fail "$u" "truncate score" truncate -s 0 "$MNT/u1/mine0/score"
	must_fail "$u" "write score" bash -c 'echo 1 > "$1"' _ "$MNT/u1/mine0/score"
	must_fail "$u" "mkfifo" mkfifo "$MNT/u1/fifo"
	must_fail "$u" "cp a file in" cp /etc/hostname "$MNT/u1/"
	must_fail "$u" "write its own trigger with O_CREAT|O_EXCL" $PY -c 'import os, sys; os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$MNT/u1/mine0/defrag"
done
must_fail "$U1" "chown" chown $U1 "$MNT/rootfile1"
snap_tree "$S" >"$T/tree.after"
diff "$T/tree.before" "$T/tree.after" >&2 || fail "the source tree changed through the mount"
log "writing: $(wc -l <"$T/writes.log") attempts failed, e.g. $(grep -m 1 "^$U1 mkdir" "$T/writes.log"); $(grep -m 1 "^0 mkdir" "$T/writes.log")"

# ---- 4. escaping SOURCE: symlinks, "..", odd names, a hard link -----------------
for u in $U1 0; do
	as_uid "$u" ls -a "$MNT/u1" | grep -q '^link-' && fail "ls of u1 shows a symlink: $(ls "$MNT/u1" | tr '\n' ' ')"
	for l in link-out link-etc link-file link-abs link-dot link-self link-passwd; do
		out=$(as_uid "$u" stat "$MNT/u1/$l" 2>&1) && fail "uid $u: stat u1/$l succeeded: $out"
		[[ $out == *"No such file"* ]] || fail "uid $u: stat u1/$l: expected ENOENT, got $out"
		for a in score extents report stats; do
			out=$(as_uid "$u" cat "$MNT/u1/$l/$a" 2>&1) && { echo "$out" >>"$T/out.$u"; fail "uid $u: cat u1/$l/$a succeeded"; }
		done
		hw_as "$u" ENOENT "defrag through symlink $l" write "$MNT/u1/$l/defrag" 1
	done
	for n in '@..' '@.' '@' '@@' '@@..' '@link-out' '..\' '.\x2e'; do
		out=$(as_uid "$u" $PY -c 'import os, sys; os.stat(sys.argv[1]); print("found")' "$MNT/u1/$n" 2>&1) &&
			fail "uid $u: the name '$n' in u1 exists: $out"
	done
done
check_eq "$(stat -c %d:%i "$MNT/..")" "$(stat -c %d:%i "$T")" "$MNT/.. (the mount point's parent, not SOURCE's)"
check_eq "$(stat -c %d:%i "$MNT/u1/..")" "$(stat -c %d:%i "$MNT")" "$MNT/u1/.."
# Root's view of SOURCE counts exactly the regular files below SOURCE.
check_eq "$(stat_key "$MNT/stats" files)" "$(unique_files "$S")" "files in SOURCE's stats"
readable 0 "$MNT/report"
readable 0 "$MNT/extents"
# The hard link is the outside file itself, reachable inside: shown (its
# figures are that inode's), not defragmentable by U1.
check_eq "$(e4_records "$MNT/pub/hl/extents")" "$(filefrag_records "$O/OUTSIDE_hl0")" "hard link pub/hl: extents"
log "escape (symlinks, names, ..): checked"

# ---- 5. the swap race: play/d is a directory, then a symlink to ../outside ------
# (play/l -> ../../../outside is swapped with d by renames as U1, as fast as
# it can, while U1 reads d's files and runs d's defrag, and root reads too.)
cat >"$T/swap.py" <<'EOF'
import os, sys, time
play, secs = sys.argv[1], float(sys.argv[2])
d, l, tmp = (os.path.join(play, n) for n in ("d", "l", "d.tmp"))
n = 0
end = time.monotonic() + secs
while time.monotonic() < end:
    os.rename(d, tmp)   # d: gone
    os.rename(l, d)     # d: the symlink to ../outside
    os.rename(d, l)
    os.rename(tmp, d)   # d: the directory again
    n += 1
print(n)
EOF
cat >"$T/race_reader.sh" <<'EOF'
# race_reader.sh MNT SECONDS OUT: reads d's attribute files and runs d's jobs.
m=$1 end=$((SECONDS + $2)) out=$3
i=0
while [ $SECONDS -lt $end ]; do
	for a in score extents stats stats.json report defrag f_in0/extents f_in1/extents f_in0/score; do
		cat "$m/play/d/$a" >>"$out" 2>>"$out.err"
	done
	ls "$m/play/d" >>"$out" 2>>"$out.err"
	echo 1 2>>"$out.err" >"$m/play/d/defrag"
	echo 1 2>>"$out.err" 1<>"$m/play/d/f_in0/defrag"
	cat "$m/play/extents" "$m/play/report" >>"$out" 2>>"$out.err"
	i=$((i + 1))
done
echo "rounds $i" >>"$out.err"
EOF
mkdir "$T/u1out"
chown $U1 "$T/u1out"
swap_secs=6
as_uid $U1 $PY "$T/swap.py" "$S/play" $swap_secs >"$T/swaps" 2>&1 &
swapper=$!
as_uid $U1 bash "$T/race_reader.sh" "$MNT" $swap_secs "$T/u1out/a" &
reader1=$!
as_uid $U1 bash "$T/race_reader.sh" "$MNT" $swap_secs "$T/u1out/b" &
reader2=$!
bash "$T/race_reader.sh" "$MNT" $swap_secs "$T/race.0" &
reader3=$!
wait "$swapper" || fail "the swapping loop failed: $(cat "$T/swaps")"
wait "$reader1" "$reader2" "$reader3" || true
cat "$T/u1out/a" "$T/u1out/b" >>"$T/out.$U1" 2>/dev/null || true
cat "$T/race.0" >>"$T/out.0"
cat "$T/u1out/a.err" "$T/u1out/b.err" "$T/race.0.err" >"$T/race.errs" 2>/dev/null || true
rounds=$(awk '$1 == "rounds" { s += $2 } END { print s + 0 }' "$T/race.errs")
errs=$(grep -v '^rounds ' "$T/race.errs" | sed 's/^.*: //' | sort | uniq -c | sort -rn | head -n 6 | awk '{ n = $1; $1 = ""; printf "%s%s x%d", (NR > 1 ? ";" : ""), $0, n }')
log "swap race: $(cat "$T/swaps") swaps in $swap_secs s; 3 readers did $rounds rounds (11 reads, 2 jobs, 1 listing each); their errors:$errs"
alive "after the swap race"
[ -L "$S/play/l" ] && [ -d "$S/play/d" ] || fail "the swap loop left play/ in a wrong state"
check "f_in0 content" "$MKFRAG" verify frag "$S/play/d/f_in0" 0
check "f_in1 content" "$MKFRAG" verify frag "$S/play/d/f_in1" 1

# ---- 6. a directory moved out of SOURCE while the user holds it ----------------
esc_recs=$(filefrag_records "$S/play/esc/escf0")
cat >"$T/moveout.py" <<'EOF'
import os, sys, time
held, src, dst = sys.argv[1:4]
os.chdir(held)          # holds the node play/esc in the mount
# Triggers opened for writing before the move, written after it.
pre = {a: os.open(a, os.O_WRONLY) for a in ("defrag", "escf0/defrag")}
os.rename(src, dst)     # play/esc -> ../outside/u1w/esc (U1 may write there)
time.sleep(0.2)
for a, fd in pre.items():
    try:
        os.write(fd, b"1\n")
        print("write 1 to %s (opened before): ok" % a)
    except OSError as e:
        print("write 1 to %s (opened before): %s" % (a, os.strerror(e.errno)))
    os.close(fd)
for a in ("score", "extents", "report", "stats", "escf0/extents"):
    try:
        with open(a) as f:
            print("read %s: %s" % (a, f.read().replace("\n", " | ")))
    except OSError as e:
        print("read %s: %s" % (a, os.strerror(e.errno)))
for a in ("defrag", "escf0/defrag"):
    try:
        fd = os.open(a, os.O_WRONLY)
        os.write(fd, b"1\n")
        os.close(fd)
        print("write 1 to %s: ok" % a)
    except OSError as e:
        print("write 1 to %s: %s" % (a, os.strerror(e.errno)))
EOF
as_uid $U1 $PY "$T/moveout.py" "$MNT/play/esc" "$S/play/esc" "$O/u1w/esc" >"$T/moveout.out" 2>&1 ||
	fail "the move-out script failed: $(cat "$T/moveout.out")"
cat "$T/moveout.out" >>"$T/out.$U1"
log "moved out: $(grep -c ': ok' "$T/moveout.out") of 4 defrag writes succeeded; $(grep -c '^read .*: [0-9#]' "$T/moveout.out") of 5 reads gave figures"
if [ "$(filefrag_records "$O/u1w/esc/escf0")" != "$esc_recs" ]; then
	violation "a directory moved out of SOURCE (play/esc -> outside/u1w/esc) while uid $U1 held it as its cwd was defragmented through the mount: escf0 $(echo "$esc_recs" | wc -l) -> $(filefrag_records "$O/u1w/esc/escf0" | wc -l) records ($(grep '^write' "$T/moveout.out" | tr '\n' ';'))"
fi
if grep -q '^read score: [0-9]' "$T/moveout.out"; then
	violation "a directory moved out of SOURCE was still analysed through the held node: $(grep '^read score' "$T/moveout.out")"
fi
check "escf0 content" "$MKFRAG" verify frag "$O/u1w/esc/escf0" 0

# ---- nothing outside was analysed or moved --------------------------------------
outside_state >"$T/outside.after"
if ! cmp -s "$T/outside.before" "$T/outside.after"; then
	violation "a file outside SOURCE changed: $(diff "$T/outside.before" "$T/outside.after" | head -n 4 | tr '\n' ' ')"
fi
for u in $U1 $U2 0; do
	if grep -q OUTSIDE_ "$T/out.$u"; then
		violation "uid $u read output naming a file outside SOURCE: $(grep -m 1 OUTSIDE_ "$T/out.$u")"
	fi
	# Physical blocks of the outside files in any extents output read.
	grep -hE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ ' "$T/out.$u" | awk '{ print $3 }' | sort -u >"$T/seen.$u" || true
	common=$(comm -12 "$T/outside.blocks" "$T/seen.$u" | head -n 3 | tr '\n' ' ')
	[ -z "$common" ] || violation "uid $u read extents showing blocks of files outside SOURCE (physical $common)"
done
alive "at the end"
stop_e4infofs "$MNT"
if [ ${#VIOLATIONS[@]} -gt 0 ]; then
	fail "${#VIOLATIONS[@]} violation(s): $(printf '%s; ' "${VIOLATIONS[@]}")"
fi
log "ok"
