#!/usr/bin/env bash
# An ordinary user's daemon (issue 14): e4infofs run as uid 65534 on a tree
# of its own, everything read and written as 65534 (the mount has no
# allow_other). It answers what a root daemon on the same tree answers,
# defragments the user's files without changing content, times or holes,
# refuses another user's 0600 file with EACCES, answers no request with a
# bare EPERM, never answers for another object after a rename or a
# replacement, works below PATH_MAX, and reads freespace. Under ASan the
# user's daemon keeps LeakSanitizer (detect_leaks=1): it works as uid
# 65534 here (setpriv execs the daemon, which is then dumpable, so LSan's
# tracer may attach to its threads).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd setpriv sha256sum
# Not mkfs's default geometry (4 MiB groups, flex groups of 2): e4defrag's
# best of a file over 8 MiB depends on it, and the user cannot read the
# device's superblock; the daemon takes it from the filesystem's map.
setup_image 256 -b 4096 -g 1024 -G 2

USR=65534
as_user() { as_uid $USR "$@"; }
allow_user_fuse

U=$SRC/u
mkdir "$U"
chown $USR:$USR "$U"
# The user's tree, made by the user.
as_user mkdir -p "$U/a/b/c" "$U/r" "$U/s"
as_user "$MKFRAG" frag "$U/a" f 4 256 8
as_user "$MKFRAG" frag "$U/a/b/c" g 3 512 16
as_user "$MKFRAG" frag "$U/a/b" big 2 10240 64
as_user "$MKFRAG" frag "$U/r" old 1 256 8
as_user "$MKFRAG" frag "$U/r" x 1 256 8
as_user "$MKFRAG" frag "$U/r" keep 2 128 8
as_user "$MKFRAG" sparse "$U/s/sparse" 4096
# A tree deeper than PATH_MAX: 40 directories of 120-byte names.
as_user /usr/bin/python3 - "$U" "$MKFRAG" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(40):
    name = ("d%02d" % i) + "x" * 117
    os.mkdir(name, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open("deepfile", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
for i in range(16):          # 16 runs: fsync'ed chunks with gaps made by a neighbour
    os.write(f, bytes([i]) * 8192)
    os.fsync(f)
os.close(f)
EOF
sync

# What the user cannot search is refused at start: one line, status 1.
mkdir "$SRC/rootonly" "$T/refused"
chmod 700 "$SRC/rootonly"
as_user mkdir "$U/unsearchable"
chown $USR:$USR "$T/refused"
for dir in "$SRC/rootonly" "$U/unsearchable"; do
	[ "$dir" = "$U/unsearchable" ] && chmod 400 "$dir"
	st=0
	as_user "$E4INFOFS" "$dir" "$T/refused" -f >"$T/refused.out" 2>&1 || st=$?
	check_eq "$st" 1 "exit status of a user's daemon on $dir"
	check_eq "$(wc -l <"$T/refused.out")" 1 "lines a user's daemon on $dir prints"
	grep -q 'not readable and searchable by this user' "$T/refused.out" ||
		fail "a user's daemon on $dir said: $(cat "$T/refused.out")"
	_is_mounted "$T/refused" && fail "a user's daemon on $dir mounted"
done
rmdir "$U/unsearchable"

RM=$T/rootmnt
UM=$T/usermnt
mount_e4infofs "$U" "$RM"
mount_e4infofs_as $USR "$U" "$UM"
USER_LOG=${_DAEMON_LOGS[-1]}

ERRS=$T/errs
: >"$ERRS"
chmod 666 "$ERRS"
# uread FILE: FILE's content read as the user through any path; stderr
# kept in $ERRS for the EPERM check.
uread() { as_user cat "$1" 2>>"$ERRS"; }

# Time-dependent fields differ between two reads.
untimed() { grep -Ev '^(scanned_at|scan_seconds):' || true; }
untimed_json() { jq -S 'walk(if type == "object" then del(.scanned_at, .scan_seconds) else . end)'; }
same_as_root() {
	local rel=$1 a mine theirs
	for a in score extents stats stats.json report; do
		[ "$a" = report ] && [ -f "$SRC/u/$rel" ] && continue
		filter=untimed
		[ "$a" = stats.json ] && filter=untimed_json
		mine=$(uread "$UM/$rel/$a" | $filter) || fail "user cannot read $rel/$a"
		theirs=$($filter <"$RM/$rel/$a")
		[ -n "$mine" ] || fail "user's $rel/$a is empty"
		check_eq "$mine" "$theirs" "$rel/$a as the user vs the root daemon"
	done
}

# The figures: the same as a root daemon's, at every depth.
grep -q 'not root: no fanotify mark' "$USER_LOG" || fail "no line about the missing fanotify mark at start"
grep -q 'default geometry' "$USER_LOG" && fail "the user's daemon assumed the default geometry"
[ "$(e4defrag_score "$U/a/b")" -gt 0 ] || fail "a/b scores 0: nothing to compare"
check_eq "$(uread "$UM/a/b/score")" "$(e4defrag_score "$U/a/b")" "a/b score (best over 2 flex groups) vs e4defrag -c"
for rel in . a a/f0 a/b a/b/big0 a/b/c a/b/c/g2 r r/keep0 s s/sparse; do
	same_as_root "$rel"
done
uread "$UM/metrics" >/dev/null || fail "user cannot read metrics"

# Below PATH_MAX: the same walk through both mounts, opened piecewise.
deep_read() {
	/usr/bin/python3 - "$1" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(40):
    nfd = os.open(("d%02d" % i) + "x" * 117, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
out = []
for a in ("deepfile/score", "deepfile/extents", "score", "stats"):
    with os.fdopen(os.open(a, os.O_RDONLY, dir_fd=fd), "rb") as f:
        out.append(f.read().decode())
print("\n".join(l for l in "".join(out).splitlines() if not l.startswith(("scanned_at", "scan_seconds"))))
EOF
}
deep_user=$(as_user bash -c "$(declare -f deep_read); deep_read '$UM'" 2>>"$ERRS") ||
	fail "the user's daemon cannot serve a node deeper than PATH_MAX"
deep_root=$(deep_read "$RM")
check_eq "$deep_user" "$deep_root" "attributes deeper than PATH_MAX, user vs root daemon"

# Defragmentation of the user's files, by the user.
files=(a/f0 a/f1 a/f2 a/f3 a/b/c/g0 a/b/c/g1 a/b/c/g2 r/keep0 s/sparse)
declare -A runs_before times_before sums_before holes_before
holes() {
	/usr/bin/python3 - "$1" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
end, off, out = os.fstat(fd).st_size, 0, []
while off < end:
    try:
        d = os.lseek(fd, off, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    out.append("%d-%d" % (d, h))
    off = h
print(" ".join(out))
EOF
}
for f in "${files[@]}"; do
	sums_before[$f]=$(sha256sum <"$U/$f")
	holes_before[$f]=$(holes "$U/$f")
	runs_before[$f]=$(filefrag_count "$U/$f")
	times_before[$f]=$(stat -c '%X %Y' "$U/$f")
done
[ "${runs_before[a/f0]}" -gt 4 ] || fail "a/f0 is not fragmented (${runs_before[a/f0]} runs)"
[ "${holes_before[s/sparse]}" != "0-$(stat -c %s "$U/s/sparse")" ] || fail "s/sparse has no hole"
as_user sh -c "echo 1 > '$UM/defrag'" 2>>"$ERRS" || fail "the user's defrag of the tree failed: $(uread "$UM/defrag")"
status=$(uread "$UM/defrag")
grep -qx 'state: done' <<<"$status" || fail "defrag state: $status"
grep -qx 'failed: 0' <<<"$status" || fail "defrag failures: $status"
for f in "${files[@]}"; do
	check_eq "$(stat -c '%X %Y' "$U/$f")" "${times_before[$f]}" "$f atime/mtime after the user's defrag"
	check_eq "$(holes "$U/$f")" "${holes_before[$f]}" "$f holes after the user's defrag"
	check_eq "$(sha256sum <"$U/$f")" "${sums_before[$f]}" "$f content after the user's defrag"
done
for f in a/f0 a/b/c/g0 r/keep0; do
	after=$(filefrag_count "$U/$f")
	[ "$after" -lt "${runs_before[$f]}" ] || fail "$f: runs ${runs_before[$f]} -> $after, expected fewer"
done

# A donor needs a writable directory: the user's read-only directory's
# file gets its donor in SOURCE (the user's, writable), and with nowhere
# writable the file is skipped as no-donor-dir, untouched.
as_user "$MKFRAG" frag "$U/r" ro 1 256 8
chmod 555 "$U/r"
sync
ro_before=$(filefrag_count "$U/r/ro0")
as_user sh -c "echo 1 > '$UM/r/ro0/defrag'" 2>>"$ERRS" || fail "defrag of a file in a read-only directory: $(uread "$UM/r/ro0/defrag")"
[ "$(filefrag_count "$U/r/ro0")" -lt "$ro_before" ] || fail "r/ro0 not moved with its donor in SOURCE"
chmod 755 "$U/r"
as_user "$MKFRAG" frag "$U/r" nodir 2 256 8
chmod 555 "$U/r" "$U"
sync
sum=$(sha256sum <"$U/r/nodir0")
nodir_before=$(filefrag_count "$U/r/nodir0")
as_user sh -c "echo 1 > '$UM/r/nodir0/defrag'" 2>>"$ERRS" || fail "defrag with no writable directory: $(uread "$UM/r/nodir0/defrag")"
check_eq "$(uread "$UM/r/nodir0/defrag" | sed -n 's/^skipped_no-donor-dir: //p')" 1 "skipped_no-donor-dir of r/nodir0"
check_eq "$(filefrag_count "$U/r/nodir0")" "$nodir_before" "runs of r/nodir0, skipped"
check_eq "$(sha256sum <"$U/r/nodir0")" "$sum" "r/nodir0 content, skipped"
# ... unless -o donor_dir names a writable one (a daemon of its own; a
# donor_dir on another filesystem is refused at start in one line).
mkdir "$SRC/donors"
chown $USR:$USR "$SRC/donors"
st=0
as_user "$E4INFOFS" "$U" "$T/refused" -f -o donor_dir=/proc >"$T/refused.out" 2>&1 || st=$?
check_eq "$st $(wc -l <"$T/refused.out")" "1 1" "status and lines of a daemon with donor_dir on another filesystem"
grep -q "donor_dir=/proc: not on SOURCE's filesystem" "$T/refused.out" || fail "donor_dir=/proc: $(cat "$T/refused.out")"
mount_e4infofs_as $USR "$U" "$T/donormnt" -o donor_dir="$SRC/donors"
as_user sh -c "echo 1 > '$T/donormnt/r/nodir0/defrag'" 2>>"$ERRS" || fail "defrag with -o donor_dir: $(uread "$T/donormnt/r/nodir0/defrag")"
[ "$(filefrag_count "$U/r/nodir0")" -lt "$nodir_before" ] || fail "r/nodir0 not moved with its donor in -o donor_dir"
check_eq "$(sha256sum <"$U/r/nodir0")" "$sum" "r/nodir0 content, moved"
stop_e4infofs "$T/donormnt"
chmod 755 "$U/r" "$U"

# Another user's 0600 file in the user's tree: EACCES, never EPERM; the
# directory's figures still answer.
"$MKFRAG" frag "$U/a" secret 1 128 8
chmod 600 "$U/a/secret0"
for a in score extents stats stats.json; do
	if err=$(as_user cat "$UM/a/secret0/$a" 2>&1 >/dev/null); then
		fail "the user read root's 0600 a/secret0/$a"
	fi
	grep -q 'Permission denied' <<<"$err" || fail "a/secret0/$a: expected Permission denied, got: $err"
done
uread "$UM/a/score" >/dev/null || fail "a/score does not answer beside an unreadable file"
check_eq "$(uread "$UM/a/stats" | sed -n 's/^skipped_unreadable: //p')" 1 "a/stats: root's 0600 file counted unreadable"

# A node looked up before a rename or a replacement never answers for the
# object now at its name.
held_read() { # held_read NAME: holds $UM/r/NAME, runs the change, reads extents
	/usr/bin/python3 - "$UM/r/$1" "$2" <<'EOF'
import errno, os, subprocess, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
sys.stdout.write(open(os.path.join(sys.argv[1], "extents")).read())
print("--")
sys.stdout.flush()
subprocess.run(["sh", "-c", sys.argv[2]], check=True)
time.sleep(1.5)  # past the kernel's entry and attribute timeout
try:
    f = os.open("extents", os.O_RDONLY, dir_fd=fd)
    sys.stdout.write(os.read(f, 1 << 20).decode())
except OSError as e:
    if e.errno not in (errno.ESTALE, errno.ENOENT):
        raise
    print("ERR %s" % errno.errorcode[e.errno])
EOF
}
as_user chmod 755 "$U/r"
out=$(as_user bash -c "$(declare -f held_read); UM='$UM' held_read old0 'mv $U/r/old0 $U/r/moved && $MKFRAG frag $U/r old 1 384 4'" 2>>"$ERRS") ||
	fail "reading a renamed node"
after=${out#*--$'\n'}
new_map=$(cat "$RM/r/old0/extents")
moved_map=$(cat "$RM/r/moved/extents")
[ "$after" != "$new_map" ] || fail "a renamed node answered with the extents of the new file at its old name"
[ "${after:0:4}" = "ERR " ] || [ "$after" = "$moved_map" ] || fail "renamed node answered: $after"
log "renamed node: ${after:0:12}"
out=$(as_user bash -c "$(declare -f held_read); UM='$UM' held_read x0 'rm $U/r/x0 && $MKFRAG frag $U/r x 1 384 4'" 2>>"$ERRS") ||
	fail "reading a replaced node"
after=${out#*--$'\n'}
[ "${after:0:4}" = "ERR " ] || fail "a replaced node answered for the new file: $after"
log "replaced node: ${after:0:12}"

# freespace as the user: an answer, never EPERM.
fsp=$(uread "$UM/freespace") || fail "the user cannot read freespace"
grep -Eq '^(total_free_blocks|available): ' <<<"$fsp" || fail "freespace: $fsp"

# No request answered a bare EPERM.
if grep -n 'Operation not permitted' "$ERRS" >&2; then
	fail "a request as the user answered EPERM (above)"
fi

stop_e4infofs "$UM"
stop_e4infofs "$RM"
log "ok"
