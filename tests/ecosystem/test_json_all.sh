#!/usr/bin/env bash
# Every JSON the daemon produces (stats.json of every directory and file
# node of the mount) parses with python3's json module, strictly (no NaN or
# Infinity, no duplicate keys, one object, nothing after it), and with jq;
# on a tree with odd names (quotes, backslashes, newlines, bytes that are
# not UTF-8, names of attribute files), empty directories, a directory of
# empty files only, sparse, preallocated, tiny and contiguous files, hard
# links, a deep chain, and again after a defragmentation job.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 128

mkdir -p "$SRC/frag/sub" "$SRC/empty-dir" "$SRC/only-empty" "$SRC/odd" "$SRC/deep"
"$MKFRAG" frag "$SRC/frag" f 3 512 8
"$MKFRAG" frag "$SRC/frag/sub" g 2 256 4
"$MKFRAG" frag "$SRC/frag" contig 1 1024 1024
"$MKFRAG" sparse "$SRC/frag/sparse" 1024
"$MKFRAG" prealloc "$SRC/frag/prealloc" 512
: >"$SRC/only-empty/a"
: >"$SRC/only-empty/b"
truncate -s 1M "$SRC/only-empty/hole"
printf 'x' >"$SRC/frag/tiny"
ln "$SRC/frag/f0" "$SRC/frag/sub/f0-link"
for name in 'quote"d' 'back\slash' $'new\nline' $'tab\there' 'score' '@at' $'\xff\xfe' 'ünï cödé' '{"json":1}'; do
	mkdir -p "$SRC/odd/$name"
	"$MKFRAG" frag "$SRC/odd/$name" x 2 64 4
done
d=$SRC/deep
for i in $(seq 1 30); do d=$d/d$i; done
mkdir -p "$d"
"$MKFRAG" frag "$d" leaf 2 64 4
sync
start_e4infofs

# check_all WHAT: parses every stats.json under $MNT; fails on the first bad one.
check_all() {
	local what=$1 n
	find "$MNT" -name stats.json -print0 >"$T/list"
	n=$(tr -cd '\0' <"$T/list" | wc -c)
	[ "$n" -gt 60 ] || fail "$what: only $n stats.json files found"
	# python3: strict parse of each, same keys as the root's.
	python3 - "$T/list" <<'PY' || fail "$what: python3 json rejected a stats.json (above)"
import json, sys
paths = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
def no_const(c):
    raise ValueError("non-standard constant " + c)
def no_dup(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate keys")
    return dict(pairs)
ref = None
bad = 0
for p in paths:
    raw = open(p, "rb").read()
    try:
        text = raw.decode("utf-8")
        if not text.endswith("}\n") or text.count("\n") != 1:
            raise ValueError("not one object on one newline-terminated line")
        obj = json.loads(text, parse_constant=no_const, object_pairs_hook=no_dup)
        if not isinstance(obj, dict):
            raise ValueError("not an object")
        keys = list(obj)
        if ref is None:
            ref = keys
        elif keys != ref:
            raise ValueError("keys %s differ from %s" % (keys, ref))
        for k, v in obj.items():
            if k in ("verdict", "scanned_at"):
                ok = isinstance(v, str)
            else:
                ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            if not ok:
                raise ValueError("%s: bad value %r" % (k, v))
    except ValueError as e:
        print("%r: %s: %r" % (p, e, raw[:400]))
        bad += 1
print("python3: %d stats.json parsed, %d bad" % (len(paths), bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	# jq: one value per file, each an object (one jq for all; file by
	# file only to name a culprit).
	local f types
	types=$(xargs -0 jq -r type <"$T/list" 2>"$T/jq.err") || true
	if [ "$(grep -cx object <<<"$types")" != "$n" ] || [ "$(wc -l <<<"$types")" != "$n" ]; then
		while IFS= read -r -d '' f; do
			jq -e -s 'length == 1 and (.[0] | type == "object")' "$f" >/dev/null 2>"$T/jq.err" ||
				fail "$what: jq rejects $(printf %q "$f"): $(cat "$T/jq.err") $(head -c 400 "$f")"
		done <"$T/list"
		fail "$what: jq over all files: $(sort <<<"$types" | uniq -c | tr '\n' ' ') $(cat "$T/jq.err")"
	fi
	log "$what: $n stats.json files parse with python3 and jq"
}

check_all "initial tree"
# The figures of nodes with nothing to score.
for node in empty-dir only-empty; do
	check_eq "$(jq -r '"\(.files) \(.analysed_files) \(.score) \(.fragmented_percent)"' "$MNT/$node/stats.json")" \
		"$(stat_key "$MNT/$node/stats" files) 0 0 0" "$node: files analysed_files score fragmented_percent"
done
check_eq "$(jq .skipped_empty "$MNT/only-empty/stats.json")" 3 "only-empty: skipped_empty"
# Names do not appear in stats.json, whatever they are: the odd ones parse like the rest.
check_eq "$(jq .files "$MNT/odd/@score/stats.json")" 2 "odd/@score: files"
check_eq "$(jq .files "$MNT/odd/stats.json")" 18 "odd: files"

echo 1 >"$MNT/defrag" || fail "defrag of the root failed: $(cat "$MNT/defrag")"
check_all "after a defragmentation job"
stop_e4infofs
log "ok"
