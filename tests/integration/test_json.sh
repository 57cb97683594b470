#!/usr/bin/env bash
# stats.json of every directory and file node is valid JSON holding the same
# keys, in the same order, and the same values as stats; the figures agree
# with the tree, filefrag and score.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
setup_image 128

KEYS="files analysed_files fragmented_files fragmented_percent bytes block_size blocks runs
fiemap_records best ideal holes unwritten_blocks ratio score verdict layout_score dir_locality mean_run_kib
skipped_files skipped_empty skipped_no_extents skipped_unreadable skipped_no_fiemap scanned_at
scan_seconds"
KEYS=$(tr -s ' \n' '\n\n' <<<"$KEYS" | sort)

mkdir -p "$SRC/a/b/c" "$SRC/empty" "$SRC/z"
"$MKFRAG" frag "$SRC/a" f 3 512 16
"$MKFRAG" frag "$SRC/a/b" g 2 256 8
"$MKFRAG" frag "$SRC/a/b/c" contig 1 1024 1024
"$MKFRAG" sparse "$SRC/a/b/sparse" 1024
"$MKFRAG" prealloc "$SRC/z/prealloc" 512
: >"$SRC/z/empty"
printf 'x' >"$SRC/z/tiny"
truncate -s 100K "$SRC/z/hole"
"$MKFRAG" frag "$SRC" top 2 64 4
sync

start_e4infofs
bs=$(stat -f -c %S "$SRC")

# compare_node NODE: stats vs stats.json; sets J_files, J_runs, ... (every
# key of stats.json as J_<key>) for further checks.
compare_node() {
	local node=$1 json stats score vars
	json=$(cat "$node/stats.json") || fail "$node: cannot read stats.json"
	stats=$(cat "$node/stats") || fail "$node: cannot read stats"
	score=$(cat "$node/score") || fail "$node: cannot read score"
	jq -e 'type == "object"' >/dev/null <<<"$json" || fail "$node: stats.json is not a valid JSON object: $json"
	vars=$(python3 - "$node" "$stats" "$json" "$KEYS" "$bs" "$score" <<'EOF'
import json, re, sys
node, stats, js, keys, bs, score = sys.argv[1:]
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)
js = json.loads(js, object_pairs_hook=lambda pairs: pairs)
jkeys = [k for k, _ in js]
j = dict(js)
lines = stats.split("\n")
skeys = [l.partition(": ")[0] for l in lines]
check(jkeys == skeys, "keys and their order: stats.json %s, stats %s" % (jkeys, skeys))
check(sorted(skeys) == keys.split(), "set of keys: %s, expected %s" % (sorted(skeys), keys.split()))
for k, v in j.items():
    want = str if k in ("verdict", "scanned_at") else (int, float)
    check(isinstance(v, want) and not isinstance(v, bool), "%s: wrong JSON type %r" % (k, v))
# Values: strings equal, numbers equal up to the precision stats prints
# (scan time and scan date may differ between two opens).
for line in lines:
    k, _, v = line.partition(": ")
    if k in ("scanned_at", "scan_seconds") or k not in j:
        continue
    jv = j[k]
    if k == "verdict":
        check(v == jv, "%s: %r in stats, %r in stats.json" % (k, v, jv))
        continue
    if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", v):
        bad.append("%s: stats value %r is not a number" % (k, v))
        continue
    if not isinstance(jv, (int, float)):
        continue
    dec = len(v.split(".")[1]) if "." in v else 0
    if dec == 0:
        check(isinstance(jv, int) and int(v) == jv, "%s: %r in stats, %r in stats.json" % (k, v, jv))
    else:
        check(abs(float(v) - jv) <= 0.5 * 10 ** -dec + 1e-9 * abs(jv),
              "%s: %r in stats, %r in stats.json" % (k, v, jv))
if not bad:
    check(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-]00:?00)", j["scanned_at"]),
          "scanned_at is not ISO 8601 UTC: %r" % j["scanned_at"])
    check(j["scan_seconds"] >= 0, "negative scan_seconds")
    check(j["analysed_files"] + j["skipped_files"] == j["files"], "analysed_files + skipped_files != files")
    check(j["skipped_empty"] + j["skipped_no_extents"] + j["skipped_unreadable"] + j["skipped_no_fiemap"]
          == j["skipped_files"], "skipped_* do not add up to skipped_files")
    check(j["fragmented_files"] <= j["analysed_files"], "fragmented_files > analysed_files")
    check(j["runs"] <= j["fiemap_records"], "runs > fiemap_records")
    check(j["ideal"] <= j["fiemap_records"], "ideal > fiemap_records")
    check(j["best"] <= j["ideal"], "best > ideal")
    check(0 <= j["layout_score"] <= 1, "layout_score out of 0..1")
    check(0 < j["dir_locality"] <= 1, "dir_locality out of (0..1]")
    check(0 <= j["score"] <= 100, "score out of 0..100")
    s = j["score"]
    want = "no problem" if s <= 30 else "a little bit fragmented" if s <= 55 else "needs defrag"
    check(j["verdict"] == want, "verdict %r for score %d" % (j["verdict"], s))
    check(j["block_size"] == int(bs), "block_size %r, expected %s" % (j["block_size"], bs))
    check(str(j["score"]) == score, "score %r, the score file says %s" % (j["score"], score))
    if j["analysed_files"]:
        check(abs(j["fragmented_percent"] - 100 * j["fragmented_files"] / j["analysed_files"]) < 0.1,
              "fragmented_percent")
for b in bad:
    print("%s: %s" % (node, b), file=sys.stderr)
if bad:
    sys.exit(1)
for k, v in j.items():
    if re.fullmatch(r"[a-z_]+", k) and isinstance(v, (int, float)):
        print("J_%s=%s" % (k, v))
EOF
) || fail "$node: stats and stats.json (see above)"
	eval "$vars"
}

nodes=0
while IFS= read -r -d '' d; do
	rel=${d#"$SRC"}
	node=$MNT$rel
	compare_node "$node"
	# files: regular files of the subtree (no hard links here), runs: sum
	# of filefrag's counts.
	files=$(find "$d" -xdev -path "$SRC/lost+found" -prune -o -type f -print | wc -l)
	check_eq "$J_files" "$files" "$node: files"
	runs=0
	while IFS= read -r -d '' f; do
		[ "$(stat -c %s "$f")" -gt 0 ] || continue
		runs=$((runs + $(filefrag_count "$f")))
	done < <(find "$d" -xdev -path "$SRC/lost+found" -prune -o -type f -print0)
	check_eq "$J_runs" "$runs" "$node: runs"
	nodes=$((nodes + 1))
done < <(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type d -print0)

while IFS= read -r -d '' f; do
	rel=${f#"$SRC"}
	node=$MNT$rel
	compare_node "$node"
	check_eq "$J_files" 1 "$node: files"
	size=$(stat -c %s "$f")
	if [ "$size" -gt 0 ] && [ "$(filefrag_count "$f")" -gt 0 ]; then
		check_eq "$J_analysed_files $J_runs $J_bytes" \
			"1 $(filefrag_count "$f") $size" "$node: analysed_files runs bytes"
		check_eq "$J_fiemap_records" "$(filefrag_records "$f" | wc -l)" \
			"$node: fiemap_records"
	else
		check_eq "$J_analysed_files" 0 "$node: analysed_files"
		check_eq "$J_skipped_files" 1 "$node: skipped_files"
	fi
	nodes=$((nodes + 1))
done < <(find "$SRC" -xdev -path "$SRC/lost+found" -prune -o -type f -print0)
log "$nodes nodes: stats.json matches stats"

# Specific figures.
check_eq "$(jq .skipped_empty "$MNT/z/empty/stats.json")" 1 "empty file: skipped_empty"
check_eq "$(jq .holes "$MNT/a/b/c/contig0/stats.json")" 0 "contiguous file: holes"
check_eq "$(jq .layout_score "$MNT/a/b/c/contig0/stats.json")" 1 "contiguous file: layout_score"
h=$(jq .holes "$MNT/a/b/sparse/stats.json")
[ "$h" -ge 3 ] || fail "sparse file: holes $h, expected >= 3"
u=$(jq .unwritten_blocks "$MNT/z/prealloc/stats.json")
want_u=$(filefrag -v "$SRC/z/prealloc" | awk -F: '/^ *[0-9]+: / && /unwritten/ { gsub(/ /, "", $4); n += $4 } END { print n + 0 }')
check_eq "$u" "$want_u" "prealloc: unwritten_blocks"

stop_e4infofs
log "ok"
