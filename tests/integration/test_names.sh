#!/usr/bin/env bash
# Odd names (spaces, newline, tab, backslash, bytes that are not UTF-8, a
# leading '-', 255 bytes), a tree deeper than PATH_MAX, names colliding with
# the attribute files, and entries that are never shown.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 256

ATTRS_DIR="extents report score stats stats.json"
ATTRS_FILE="extents score stats stats.json"
# Attribute files beyond this test's scope (docs/defrag.md): allowed in a
# listing, not required.
OPTIONAL_ATTRS="defrag freespace plan map.svg map.png map-before.svg map-before.png index.html"

# listing DIR: the names in DIR, one per line, non-printable bytes as \xHH
# (so names with newlines compare safely).
listing() {
	python3 - "$1" <<'EOF'
import os, sys
names = os.listdir(os.fsencode(sys.argv[1]))
for n in sorted(names):
    print("".join(chr(b) if 0x21 <= b < 0x7f and b != 0x5c else "\\x%02x" % b for b in n))
EOF
}

# expect_listing DIR NAME...: the listing of DIR is exactly NAMEs (plus
# OPTIONAL_ATTRS).
expect_listing() {
	local dir=$1 got want o
	shift
	got=$(listing "$dir") || fail "cannot list $dir"
	for o in $OPTIONAL_ATTRS; do
		[[ " $* " == *" $o "* ]] || got=$(grep -vxF "$o" <<<"$got" || true)
	done
	want=$(python3 - "$@" <<'EOF'
import os, sys
for n in sorted(os.fsencode(a) for a in sys.argv[1:]):
    print("".join(chr(b) if 0x21 <= b < 0x7f and b != 0x5c else "\\x%02x" % b for b in n))
EOF
)
	if [ "$got" != "$want" ]; then
		diff <(echo "$want") <(echo "$got") >&2 || true
		fail "listing of $dir (< expected, > got)"
	fi
}

# check_file_node REAL NODE: NODE's extents agree with filefrag on REAL.
check_file_node() {
	local real=$1 node=$2 runs
	[ -d "$node" ] || fail "no directory node for $(printf %q "$real")"
	runs=$(sed -n 's/^runs: //p' "$node/extents") || fail "cannot read extents of $(printf %q "$node")"
	check_eq "$runs" "$(filefrag_count "$real")" "runs of $(printf %q "$real")"
	[[ $(cat "$node/score") =~ ^[0-9]+$ ]] || fail "score of $(printf %q "$node")"
	grep -q '^files: 1$' "$node/stats" || fail "stats of $(printf %q "$node")"
}

# ---- odd names -------------------------------------------------------------
long=$(printf 'L%.0s' $(seq 1 255))
NAMES=("with space" $'new\nline' $'tab\there' 'back\slash' $'\xff\xfe not utf8' '-leading'
	"$long" 'héllo wörld' ' lead-space' 'trail-space ')
mkdir "$SRC/odd"
"$MKFRAG" frag "$SRC/odd" t ${#NAMES[@]} 128 8
for i in "${!NAMES[@]}"; do
	mv "$SRC/odd/t$i" "$SRC/odd/${NAMES[$i]}"
done
mkdir "$SRC/odd/sub dir"$'\n'"x"
"$MKFRAG" frag "$SRC/odd/sub dir"$'\n'"x" $'in\\' 2 128 4

start_e4infofs

expect_listing "$MNT/odd" "${NAMES[@]}" "sub dir"$'\n'"x" $ATTRS_DIR
for n in "${NAMES[@]}"; do
	check_file_node "$SRC/odd/$n" "$MNT/odd/$n"
	expect_listing "$MNT/odd/$n" $ATTRS_FILE
done
check_file_node "$SRC/odd/sub dir"$'\n'"x/in\\0" "$MNT/odd/sub dir"$'\n'"x/in\\0"

# Names in directory extents and report are escaped: \\, \n, \t, \xHH.
python3 - "$SRC/odd" "$MNT/odd/extents" "$MNT/odd/report" <<'EOF' || fail "escaped names in extents/report of odd/"
import os, re, sys
src, ext, rep = (os.fsencode(a) for a in sys.argv[1:])

def esc(name):
    out = []
    for ch in name.decode("utf-8", errors="surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out)

def norm(s):  # hex digits in either case
    return re.sub(r"\\x([0-9A-Fa-f]{2})", lambda m: "\\x" + m.group(1).lower(), s)

files = [n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))]
want = sorted(esc(n) for n in files)
lines = open(ext, "rb").read().decode("utf-8").split("\n")
assert lines[-1] == "", "extents does not end with a newline"
assert lines[0].startswith("#"), "no header"
got = sorted(norm(l.split(" ", 3)[3]) for l in lines[1:-1])
if got != want:
    print("extents names:\n got  %r\n want %r" % (got, want), file=sys.stderr)
    sys.exit(1)
# report: paths relative to odd/, escaped the same way.
paths = set(want)
for d in os.listdir(src):
    p = os.path.join(src, d)
    if os.path.isdir(p):
        for n in os.listdir(p):
            paths.add(esc(d + b"/" + n))
lines = open(rep, "rb").read().decode("utf-8").split("\n")
assert lines[0].startswith("#"), "report: no header"
body = [l for l in lines[1:] if l]
assert body, "report lists nothing"
for l in body:
    path = norm(l.split(" ", 5)[5])
    if path not in paths:
        print("report path %r is not an escaped relative path of odd/ (%r)" % (path, sorted(paths)), file=sys.stderr)
        sys.exit(1)
EOF
log "odd names ok"

# ---- deeper than PATH_MAX --------------------------------------------------
seg=$(printf 'd%.0s' $(seq 1 199))
mkdir "$SRC/deep"
(
	cd "$SRC/deep"
	for i in $(seq 1 26); do
		mkdir "$seg$((i % 10))"
		cd "$seg$((i % 10))"
	done
	"$MKFRAG" frag . f 3 256 16
	depth=$(pwd | wc -c)
	[ "$depth" -gt 5000 ] || exit 3
	filefrag_count f0 >"$T/deep.count"
	filefrag_records f0 >"$T/deep.records"
	for i in 0 1 2; do filefrag_count "f$i"; done | awk "{ s += \$1 } END { print s }" >"$T/deep.runs"
) || fail "building the deep tree"
(
	cd "$MNT/deep"
	for i in $(seq 1 26); do cd "$seg$((i % 10))"; done
	cat f0/extents >"$T/deep.e4" || exit 1
	cat stats >"$T/deep.stats" || exit 1
	# (plain names; python would not start in a cwd this deep)
	ls -A | grep -vxE 'defrag|freespace|plan|map(-before)?\.(svg|png)|index\.html' >"$T/deep.ls" || exit 1
) || fail "reading the deep tree through the mount"
check_eq "$(sed -n 's/^runs: //p' "$T/deep.e4")" "$(cat "$T/deep.count")" "deep f0: runs"
check_eq "$(e4_records "$T/deep.e4")" "$(cat "$T/deep.records")" "deep f0: records"
check_eq "$(stat_key "$T/deep.stats" files)" 3 "deepest dir: files"
check_eq "$(sort "$T/deep.ls" | tr '\n' ' ')" "extents f0 f1 f2 report score stats stats.json " "deepest dir: listing"
# The whole deep subtree from its top.
check_eq "$(stat_key "$MNT/deep/stats" files)" 3 "deep/: files"
check_eq "$(stat_key "$MNT/deep/stats" runs)" "$(cat "$T/deep.runs")" "deep/: runs"
log "deep tree ok"

# ---- collisions ------------------------------------------------------------
mkdir -p "$SRC/coll/stats" "$SRC/coll/@d"
COLL_FILES=(score extents stats.json report defrag metrics freespace map.png index.html @x @score @ scores Score)
"$MKFRAG" frag "$SRC/coll" c ${#COLL_FILES[@]} 64 4
for i in "${!COLL_FILES[@]}"; do mv "$SRC/coll/c$i" "$SRC/coll/${COLL_FILES[$i]}"; done
"$MKFRAG" frag "$SRC/coll/stats" inner 1 64 64
"$MKFRAG" frag "$SRC/coll/@d" score 2 64 4
"$MKFRAG" frag "$SRC" metrics 1 64 4
mv "$SRC/metrics0" "$SRC/metrics"
"$MKFRAG" frag "$SRC" score 1 64 4
mv "$SRC/score0" "$SRC/score"
sync

expect_listing "$MNT/coll" @score @extents @stats.json @report @defrag @metrics @freespace @map.png @index.html @@x @@score @@ \
	scores Score @stats @@d $ATTRS_DIR
check_file_node "$SRC/coll/score" "$MNT/coll/@score"
check_file_node "$SRC/coll/extents" "$MNT/coll/@extents"
check_file_node "$SRC/coll/stats.json" "$MNT/coll/@stats.json"
check_file_node "$SRC/coll/report" "$MNT/coll/@report"
check_file_node "$SRC/coll/defrag" "$MNT/coll/@defrag"
check_file_node "$SRC/coll/metrics" "$MNT/coll/@metrics"
check_file_node "$SRC/coll/freespace" "$MNT/coll/@freespace"
check_file_node "$SRC/coll/map.png" "$MNT/coll/@map.png"
check_file_node "$SRC/coll/index.html" "$MNT/coll/@index.html"
check_file_node "$SRC/coll/@x" "$MNT/coll/@@x"
check_file_node "$SRC/coll/@score" "$MNT/coll/@@score"
check_file_node "$SRC/coll/@" "$MNT/coll/@@"
check_file_node "$SRC/coll/scores" "$MNT/coll/scores"
check_file_node "$SRC/coll/Score" "$MNT/coll/Score"
check_file_node "$SRC/coll/stats/inner0" "$MNT/coll/@stats/inner0"
check_file_node "$SRC/coll/@d/score0" "$MNT/coll/@@d/score0"
check_file_node "$SRC/coll/@d/score1" "$MNT/coll/@@d/score1"
check_file_node "$SRC/metrics" "$MNT/@metrics"
check_file_node "$SRC/score" "$MNT/@score"
# The attribute files beside them still work.
for a in $ATTRS_DIR; do [ -f "$MNT/coll/$a" ] || fail "coll/$a is not a file"; done
want=$(e4defrag_score "$SRC/coll")
got=$(cat "$MNT/coll/score")
within "$got" "$want" 1 || fail "coll/score: e4infofs $got, e4defrag -c $want"
check_eq "$(stat_key "$MNT/coll/stats" files)" $((${#COLL_FILES[@]} + 3)) "coll/stats: files"
check_eq "$(tail -n +2 "$MNT/coll/extents" | wc -l)" ${#COLL_FILES[@]} "coll/extents: lines"
jq -e . "$MNT/coll/stats.json" >/dev/null || fail "coll/stats.json"
grep -q '^e4infofs_scans_total ' "$MNT/metrics" || fail "root metrics shadowed by a real file"
[[ $(cat "$MNT/score") =~ ^[0-9]+$ ]] || fail "root score shadowed by a real file"
[ -f "$MNT/metrics" ] && [ -d "$MNT/@metrics" ] || fail "root metrics / @metrics"
log "collisions ok"

# ---- entries never shown ---------------------------------------------------
mkdir -p "$SRC/hid/sub" "$SRC/hid/nested"
"$MKFRAG" frag "$SRC/hid" visible 1 64 4
ln -s visible0 "$SRC/hid/link"
ln -s sub "$SRC/hid/dirlink"
ln -s /nonexistent "$SRC/hid/dangling"
mkfifo "$SRC/hid/fifo"
mknod "$SRC/hid/chardev" c 1 3
mknod "$SRC/hid/blockdev" b 7 200
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SRC/hid/sock"
mount -t tmpfs -o size=1M tmpfs "$SRC/hid/nested"
on_cleanup umount -l "$SRC/hid/nested"
echo data >"$SRC/hid/nested/on-tmpfs"
sync
expect_listing "$MNT/hid" visible0 sub $ATTRS_DIR
for n in link dirlink dangling fifo chardev blockdev sock nested; do
	[ ! -e "$MNT/hid/$n" ] || fail "hid/$n is shown"
done
check_eq "$(stat_key "$MNT/hid/stats" files)" 1 "hid/stats: files"
check_eq "$(tail -n +2 "$MNT/hid/extents" | awk '{ print $4 }')" visible0 "hid/extents"
# The filesystem root's lost+found is hidden, a deeper one is not.
[ -d "$SRC/lost+found" ] || fail "no lost+found in the image"
[ ! -e "$MNT/lost+found" ] || fail "the root's lost+found is shown"
listing "$MNT" | grep -qx 'lost+found' && fail "the root's lost+found is listed"
mkdir "$SRC/hid/sub/lost+found"
expect_listing "$MNT/hid/sub" lost+found $ATTRS_DIR
log "hidden entries ok"

stop_e4infofs
log "ok"
