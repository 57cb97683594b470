#!/usr/bin/env bash
# Permissions with -o allow_other: nodes carry the real owner; a user reads
# the attributes of what the user can read, and nothing else; nothing can be
# written, created, removed or renamed, by anyone.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd setpriv
setup_image 128

NOBODY=65534
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- "$@"; }

# must_deny WHAT CMD...: CMD fails with "Permission denied".
must_deny() {
	local what=$1 err
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		fail "$what: succeeded, expected Permission denied"
	fi
	grep -q 'Permission denied' <<<"$err" || fail "$what: expected Permission denied, got: $err"
}

# must_not_write WHAT CMD...: CMD fails (EROFS, EACCES or EPERM).
must_not_write() {
	local what=$1 err
	shift
	if err=$("$@" 2>&1); then
		fail "$what: succeeded, expected an error"
	fi
	grep -Eq 'Read-only file system|Permission denied|Operation not permitted' <<<"$err" ||
		fail "$what: expected EROFS/EACCES/EPERM, got: $err"
}

mkdir -p "$SRC/pub" "$SRC/priv" "$SRC/nobodys"
"$MKFRAG" frag "$SRC/pub" f 4 128 8
mv "$SRC/pub/f0" "$SRC/pub/mine"          # nobody's, 0600
mv "$SRC/pub/f1" "$SRC/pub/rootonly"      # root's, 0600
mv "$SRC/pub/f2" "$SRC/pub/rootpub"       # root's, 0644
mv "$SRC/pub/f3" "$SRC/pub/groupread"     # root:12345 0640
chown $NOBODY:$NOBODY "$SRC/pub/mine"
chmod 600 "$SRC/pub/mine" "$SRC/pub/rootonly"
chmod 644 "$SRC/pub/rootpub"
chown 0:12345 "$SRC/pub/groupread"
chmod 640 "$SRC/pub/groupread"
"$MKFRAG" frag "$SRC/priv" inner 2 64 4   # root's 0700 dir, 0644 files
chmod 700 "$SRC/priv"
chmod 644 "$SRC/priv/inner0" "$SRC/priv/inner1"
"$MKFRAG" frag "$SRC/nobodys" n 2 64 4     # nobody's 0700 dir
chown -R $NOBODY:$NOBODY "$SRC/nobodys"
chmod 700 "$SRC/nobodys"
chmod 755 "$SRC/pub"
sync
sums_before=$(cd "$SRC" && find . -type f -exec sha256sum {} + | sort)

start_e4infofs -o allow_other

# Owners and modes.
check_eq "$(stat -c %u:%g "$MNT/pub/mine")" "$NOBODY:$NOBODY" "owner of pub/mine node"
check_eq "$(stat -c %u:%g "$MNT/pub/mine/score")" "$NOBODY:$NOBODY" "owner of pub/mine/score"
check_eq "$(stat -c %u:%g "$MNT/pub/rootonly/extents")" "0:0" "owner of pub/rootonly/extents"
check_eq "$(stat -c %u:%g "$MNT/pub/groupread/stats")" "0:12345" "owner of pub/groupread/stats"
check_eq "$(stat -c %u:%g "$MNT/nobodys")" "$NOBODY:$NOBODY" "owner of nobodys/"
for f in "$MNT"/pub/*/score "$MNT"/score "$MNT"/pub/score; do
	[ "$(($(stat -c '0%a' "$f") & 0222))" -eq 0 ] || fail "$f is writable: mode $(stat -c %A "$f")"
done

# nobody reads what nobody can read.
for a in score extents stats stats.json; do
	as_nobody cat "$MNT/pub/mine/$a" >/dev/null || fail "nobody cannot read own pub/mine/$a"
	as_nobody cat "$MNT/pub/rootpub/$a" >/dev/null || fail "nobody cannot read root's 0644 pub/rootpub/$a"
	as_nobody cat "$MNT/nobodys/n0/$a" >/dev/null || fail "nobody cannot read nobodys/n0/$a"
	must_deny "nobody reads root's 0600 pub/rootonly/$a" as_nobody cat "$MNT/pub/rootonly/$a"
	must_deny "nobody reads root:12345 0640 pub/groupread/$a" as_nobody cat "$MNT/pub/groupread/$a"
	must_deny "nobody reads priv/inner0/$a (0700 dir)" as_nobody cat "$MNT/priv/inner0/$a"
	must_deny "nobody reads priv/$a (0700 dir)" as_nobody cat "$MNT/priv/$a"
done
for a in score extents stats stats.json report; do
	as_nobody cat "$MNT/pub/$a" >/dev/null || fail "nobody cannot read pub/$a"
	as_nobody cat "$MNT/nobodys/$a" >/dev/null || fail "nobody cannot read own nobodys/$a"
done
as_nobody cat "$MNT/score" "$MNT/metrics" >/dev/null || fail "nobody cannot read the root's score/metrics"
must_deny "nobody lists priv/" as_nobody ls "$MNT/priv"
must_deny "nobody enters pub/rootonly/" as_nobody ls "$MNT/pub/rootonly"
check_eq "$(as_nobody cat "$MNT/pub/mine/score")" "$(cat "$MNT/pub/mine/score")" "nobody and root read the same score"
# The group's read bit counts for a member of the group, as primary or as
# supplementary group.
setpriv --reuid=54321 --regid=12345 --clear-groups -- cat "$MNT/pub/groupread/score" >/dev/null ||
	fail "a user whose group is the file's cannot read pub/groupread/score"
setpriv --reuid=54321 --regid=54321 --groups=12345 -- cat "$MNT/pub/groupread/extents" >/dev/null ||
	fail "a user with the file's group as supplementary group cannot read pub/groupread/extents"
must_deny "a user of another group reads pub/groupread/score" \
	setpriv --reuid=54321 --regid=54321 --groups=777 -- cat "$MNT/pub/groupread/score"
# root reads everything.
cat "$MNT/pub/rootonly/score" "$MNT/priv/inner0/extents" "$MNT/nobodys/n1/stats" >/dev/null ||
	fail "root cannot read everything"

# Nothing can be written, by root or by the owner.
must_not_write "echo 1 > score (root)" sh -c "echo 1 > '$MNT/score'"
must_not_write "echo 1 > pub/score (root)" sh -c "echo 1 > '$MNT/pub/score'"
must_not_write "echo 1 >> extents (root)" sh -c "echo 1 >> '$MNT/pub/rootpub/extents'"
must_not_write "truncate stats (root)" truncate -s 0 "$MNT/stats"
must_not_write "owner writes own score" as_nobody sh -c "echo 1 > '$MNT/pub/mine/score'"
must_not_write "owner writes own stats.json" as_nobody sh -c "printf x > '$MNT/nobodys/n0/stats.json'"
must_not_write "metrics (root)" sh -c "echo 1 > '$MNT/metrics'"
must_not_write "create a file" touch "$MNT/pub/newfile"
must_not_write "create a file in a file node" touch "$MNT/pub/rootpub/newfile"
must_not_write "mkdir" mkdir "$MNT/pub/newdir"
must_not_write "rm attribute file" rm -f "$MNT/pub/score"
must_not_write "rm file node" rm -rf "$MNT/pub/rootpub"
must_not_write "rmdir" rmdir "$MNT/nobodys"
must_not_write "rename" mv "$MNT/pub/rootpub" "$MNT/pub/renamed"
must_not_write "symlink" ln -s x "$MNT/pub/link"
must_not_write "chmod" chmod 777 "$MNT/pub/score"
must_not_write "chown" chown "$NOBODY" "$MNT/pub/score"
must_not_write "owner creates a file" as_nobody touch "$MNT/nobodys/x"
python3 - "$MNT/pub/score" <<'EOF' || fail "opening an attribute file for writing (see above)"
import errno, os, sys
for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC, os.O_RDONLY | os.O_TRUNC):
    try:
        fd = os.open(sys.argv[1], flags)
    except OSError as e:
        if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            sys.exit("open flags %#o: unexpected %s" % (flags, e))
        continue
    try:
        os.write(fd, b"1\n")
    except OSError as e:
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.EBADF):
            os.close(fd)
            continue
    sys.exit("open flags %#o succeeded and was writable" % flags)
EOF
# The real tree is unchanged.
check_eq "$(cd "$SRC" && find . -type f -exec sha256sum {} + | sort)" "$sums_before" "real files after the attempts"
[ ! -e "$SRC/pub/newfile" ] && [ ! -e "$SRC/pub/newdir" ] || fail "something was created in the real tree"

stop_e4infofs
log "ok"
