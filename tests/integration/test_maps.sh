#!/usr/bin/env bash
# map.svg and map.png (docs/files.md): a true fixed size known at stat,
# the same picture through real renderers (rsvg-convert, and
# gdk-pixbuf-thumbnailer straight from the mount path), and pixel checks:
# a contiguous file's strip is one band, a fragmented file's one band per
# run (filefrag's count), one band again after its defrag, whose mtime
# then changes; a directory's grid shows its data where it lies.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd rsvg-convert gdk-pixbuf-thumbnailer python3
PNGCHECK=$(dirname "$0")/../tools/pngcheck.py
setup_image 128

mkdir -p "$SRC/d/sub" "$SRC/e" "$SRC/j"
"$MKFRAG" frag "$SRC/d" one 1 1024 64          # contiguous
"$MKFRAG" frag "$SRC/d" frag 4 512 64          # 8 runs each, interleaved
"$MKFRAG" frag "$SRC/d/sub" many 2 2048 4      # hundreds of runs: drawn to scale
"$MKFRAG" frag "$SRC/e" other 1 4096 64
"$MKFRAG" frag "$SRC/j" f 6 1024 64           # for a job seen while it runs
sync
start_e4infofs -o timeout=0

SVG_SIZE=131072
PNG_SIZE=131072
# Every format and renderer on a directory, a contiguous file and a file
# drawn to scale (d and d/frag0 are read below).
for n in . d/one0 d/sub/many0; do
	check_eq "$(stat -c %s "$MNT/$n/map.svg")" "$SVG_SIZE" "stat size of $n/map.svg"
	check_eq "$(stat -c %s "$MNT/$n/map.png")" "$PNG_SIZE" "stat size of $n/map.png"
	check_eq "$(wc -c <"$MNT/$n/map.svg")" "$SVG_SIZE" "bytes read of $n/map.svg"
	check_eq "$(wc -c <"$MNT/$n/map.png")" "$PNG_SIZE" "bytes read of $n/map.png"
	cp "$MNT/$n/map.png" "$T/m.png"
	ch=$(python3 "$PNGCHECK" chunks "$T/m.png")
	[[ $ch == "IHDR "*" IDAT ifPd IEND $PNG_SIZE" ]] || fail "chunks of $n/map.png: $ch"
	check_eq "$(python3 "$PNGCHECK" size "$T/m.png")" "800 500" "pixels of $n/map.png"
	rsvg-convert -o "$T/r.png" "$MNT/$n/map.svg" || fail "rsvg-convert $n/map.svg"
	check_eq "$(python3 "$PNGCHECK" size "$T/r.png")" "800 500" "pixels of $n/map.svg through rsvg"
	for f in map.png map.svg; do
		rm -f "$T/thumb.png"
		gdk-pixbuf-thumbnailer -s 128 "$MNT/$n/$f" "$T/thumb.png" || fail "gdk-pixbuf-thumbnailer $n/$f"
		check_eq "$(python3 "$PNGCHECK" size "$T/thumb.png" | cut -d' ' -f1)" 128 "thumbnail width of $n/$f"
		c=$(python3 "$PNGCHECK" colours "$T/thumb.png")
		check "thumbnail of $n/$f has $c colours" [ "$c" -ge 4 ]
	done
done

# Strips: one band per run, in the PNG (cairo) and in the SVG (rsvg).
bands() { # FILENODE: bands of map.png and of map.svg drawn by rsvg
	cp "$MNT/$1/map.png" "$T/b.png"
	rsvg-convert -o "$T/bs.png" "$MNT/$1/map.svg"
	echo "$(python3 "$PNGCHECK" bands "$T/b.png") $(python3 "$PNGCHECK" bands "$T/bs.png")"
}
check_eq "$(filefrag_count "$SRC/d/one0")" 1 "d/one0 contiguous"
check_eq "$(bands d/one0)" "1 1" "bands of a contiguous file (png svg)"
runs=$(filefrag_count "$SRC/d/frag0")
check "d/frag0 fragmented: $runs runs" [ "$runs" -ge 4 ]
check_eq "$(bands d/frag0)" "$runs $runs" "bands of a fragmented file (png svg)"
many=$(filefrag_count "$SRC/d/sub/many0")
check "d/sub/many0: $many runs, more than the 256 drawn one by one" [ "$many" -gt 256 ]
grep -q "to scale" "$MNT/d/sub/many0/map.svg" || fail "many0: the picture does not say it is to scale"
grep -q ">$many runs<" "$MNT/d/sub/many0/map.svg" || fail "many0: run count not in the SVG"

# After a defrag: one band, and a new mtime; map-before keeps the runs
# of before the job.
grep -q "No defragmentation job" "$MNT/d/frag0/map-before.svg" || fail "map-before.svg before any job"
check_eq "$(wc -c <"$MNT/d/frag0/map-before.png")" "$PNG_SIZE" "bytes of map-before.png before any job"
m0=$(stat -c %Y.%y "$MNT/d/frag0/map.png")
sleep 0.05
echo 1 >"$MNT/d/frag0/defrag"
check_eq "$(filefrag_count "$SRC/d/frag0")" 1 "d/frag0 after defrag"
check_eq "$(bands d/frag0)" "1 1" "bands after defrag (png svg)"
m1=$(stat -c %Y.%y "$MNT/d/frag0/map.png")
check "map.png mtime changed by the defrag ($m0 -> $m1)" [ "$m0" != "$m1" ]
cp "$MNT/d/frag0/map-before.png" "$T/b.png"
rsvg-convert -o "$T/bs.png" "$MNT/d/frag0/map-before.svg"
check_eq "$(python3 "$PNGCHECK" bands "$T/b.png") $(python3 "$PNGCHECK" bands "$T/bs.png")" "$runs $runs" \
	"bands of map-before (png svg)"
check_eq "$(stat -c %s "$MNT/d/frag0/map-before.svg")" "$SVG_SIZE" "stat size of map-before.svg"

# A directory's grid: d holds contiguous and fragmented data, e only
# contiguous; free space is drawn at the root and everywhere.
read -r fr co ot fe < <(cp "$MNT/d/map.png" "$T/g.png"; python3 "$PNGCHECK" cells "$T/g.png")
check "d: fragmented cells $fr" [ "$fr" -ge 1 ]
check "d: contiguous cells $co" [ "$co" -ge 1 ]
check "d: free cells $fe" [ "$fe" -ge 100 ]
read -r fr co ot fe < <(cp "$MNT/e/map.png" "$T/g.png"; python3 "$PNGCHECK" cells "$T/g.png")
check_eq "$fr" 0 "e: fragmented cells"
check "e: contiguous cells $co" [ "$co" -ge 1 ]
check_eq "$((fr + co + ot + fe))" 2048 "e: every cell drawn in a class colour"
grep -q "score $(cat "$MNT/d/score") " "$MNT/d/map.svg" || fail "d/map.svg: no score"

# A write changes the file's picture and its mtime, and the mtime of its
# directory's pictures (once the fanotify drainer, every 200 ms, saw it).
m0=$(stat -c %Y.%y "$MNT/d/one0/map.svg")
md0=$(stat -c %Y.%y "$MNT/d/map.png")
mi0=$(stat -c %Y.%y "$MNT/d/index.html")
sleep 0.05
"$MKFRAG" frag "$SRC/d" one 1 64 64
check "map.svg mtime changed by a write" [ "$(stat -c %Y.%y "$MNT/d/one0/map.svg")" != "$m0" ]
grep -q ">1 run<" "$MNT/d/one0/map.svg" || fail "d/one0: rewritten file not shown"
sleep 0.5
check "d/map.png mtime changed by a write in d" [ "$(stat -c %Y.%y "$MNT/d/map.png")" != "$md0" ]
check "d/index.html mtime changed by a write in d" [ "$(stat -c %Y.%y "$MNT/d/index.html")" != "$mi0" ]

# During a job, each open shows the layout of that moment: a throttled
# job on j's 6 files (16 runs each) is seen with fewer runs than before
# and more than after.
svg_runs() { sed -n 's/.*>[0-9]* files, \([0-9]*\) runs,.*/\1/p' "$MNT/j/map.svg"; }
before=$(svg_runs)
check "j: $before runs before the job" [ "$before" -ge 60 ]
(echo "1 mibps=2" >"$MNT/j/defrag") &
writer=$!
seen=""
for ((i = 0; i < 300; i++)); do
	state=$(sed -n 's/^state: //p' "$MNT/j/defrag")
	r=$(svg_runs)
	[ "$state" = running ] && [ "$r" -lt "$before" ] && [ "$r" -gt 6 ] && { seen=$r; break; }
	[ "$state" = running ] || [ "$i" -lt 20 ] || break
	sleep 0.05
done
wait "$writer" || fail "the job on j failed"
after=$(svg_runs)
check_eq "$after" 6 "j: runs after the job"
check "j: a map made during the job shows $seen runs (before $before, after $after)" [ -n "$seen" ]
log "j: runs $before before, $seen during, $after after the job"
