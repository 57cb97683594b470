#!/usr/bin/env bash
# GNOME's thumbnail factory on the mount, as an ordinary user (issue 16):
# the factory of libgnome-desktop-4 (the library Nautilus 43 links) run by
# uid 65534 on a root daemon's mount with -o allow_other, through
# tests/tools/thumbfactory.py, which asks it what Nautilus asks (lookup in
# the cache by URI and mtime, else generate and save). Checked: every
# thumbnail is made by the thumbnailer inside the factory's bubblewrap
# sandbox (its command line, logged by the factory), a file's map.png and
# map.svg thumbnails show one band per run at 128 and 256 pixels, a
# directory's show its grid's classes; a second request is served from
# the cache; after a defrag (a new mtime) the cached thumbnail is stale
# and a new one, of one band, is made.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd setpriv bwrap
PY=/usr/bin/python3
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
$PY -c 'import gi; gi.require_version("GnomeDesktop", "4.0")' 2>/dev/null ||
	fail "needs python3-gi and gir1.2-gnomedesktop-4.0"
setup_image 64

mkdir -p "$SRC/d"
"$MKFRAG" frag "$SRC/d" frag 4 512 64     # 8 runs each, interleaved
"$MKFRAG" frag "$SRC/d" one 1 1024 64     # contiguous
sync
start_e4infofs -o allow_other -o timeout=0
desktop_user 65534
CACHE=$T/desktop/home/.cache/thumbnails

runs=$(filefrag_count "$SRC/d/frag0")
check "d/frag0 fragmented: $runs runs" [ "$runs" -ge 4 ]

# factory SIZE PATH...: thumbfactory.py as the user; its output, and the
# sandboxed command lines the factory logged in $T/launched.
# (GLib writes debug messages to stdout: the answers are the lines that
# start with made or cached.)
factory() {
	as_desktop G_MESSAGES_DEBUG=all $PY "$TOOLS/thumbfactory.py" "$@" >"$T/factory.out" 2>&1 ||
		fail "thumbfactory.py $*: $(grep -v 'DEBUG' "$T/factory.out" | tail -n 5)"
	grep 'About to launch script:' "$T/factory.out" >"$T/launched" || true
	grep -E '^(made|cached) ' "$T/factory.out" || true
}
# field N LINE: the Nth word of LINE.
field() { cut -d' ' -f"$1" <<<"$2"; }

F=$MNT/d/frag0
for size in normal large; do
	px=128
	[ $size = large ] && px=256
	out=$(factory $size "$F/map.png" "$F/map.svg" "$MNT/d/map.png" "$MNT/d/map.svg")
	check_eq "$(cut -d' ' -f1,2 <<<"$out" | tr '\n' ' ')" \
		"made image/png made image/svg+xml made image/png made image/svg+xml " "$size: what the factory did"
	# Each was made by a thumbnailer in bubblewrap with every namespace
	# unshared, as the user: the sandbox works here.
	check_eq "$(grep -c 'script: bwrap .*--unshare-all' "$T/launched")" 4 "$size: sandboxed thumbnailer runs"
	n=0
	while read -r _ mime thumb; do
		n=$((n + 1))
		[[ $thumb == "$CACHE/$size/"*.png ]] || fail "$size thumbnail $n ($mime) not in the cache: $thumb"
		check_eq "$(stat -c %u "$thumb")" 65534 "owner of $thumb"
		check_eq "$($PY "$TOOLS/pngcheck.py" size "$thumb" | cut -d' ' -f1)" $px "$size thumbnail $n ($mime): width"
		if [ $n -le 2 ]; then
			check_eq "$($PY "$TOOLS/pngcheck.py" bands "$thumb")" "$runs" "$size thumbnail of d/frag0 ($mime): bands"
		else
			read -r fr co ot fe < <($PY "$TOOLS/pngcheck.py" classes "$thumb")
			log "$size thumbnail of d ($mime): pixels fragmented $fr contiguous $co other $ot free $fe"
			check "$size thumbnail of d ($mime): fragmented pixels $fr" [ "$fr" -ge $((px / 8)) ]
			check "$size thumbnail of d ($mime): contiguous pixels $co" [ "$co" -ge $((px / 16)) ]
			check "$size thumbnail of d ($mime): free pixels $fe" [ "$fe" -ge $((px * px / 40)) ]
		fi
	done <<<"$out"
done
check_eq "$(find "$CACHE" -path '*/fail/*' -type f | wc -l)" 0 "failed thumbnails recorded"

# Asked again with nothing changed: the cache answers, nothing is run.
out=$(factory normal "$F/map.png" "$F/map.svg")
check_eq "$(cut -d' ' -f1 <<<"$out" | tr '\n' ' ')" "cached cached " "second request"
check_eq "$(wc -l <"$T/launched")" 0 "thumbnailers run for cached thumbnails"
old_png=$(field 3 "$(head -n 1 <<<"$out")")
cp "$old_png" "$T/old.png"

# A defrag changes the picture and its mtime: the cached thumbnail is
# stale, a new one is made (same cache file, now of one band). The cache
# keeps mtimes in whole seconds: the job starts in the next second.
m0=$(stat -c %Y "$F/map.png")
sleep 1.1
echo 1 >"$F/defrag"
check_eq "$(filefrag_count "$SRC/d/frag0")" 1 "d/frag0 after defrag"
m1=$(stat -c %Y "$F/map.png")
check "map.png mtime changed by the defrag ($m0 -> $m1)" [ "$m1" -gt "$m0" ]
out=$(factory normal "$F/map.png" "$F/map.svg")
check_eq "$(cut -d' ' -f1 <<<"$out" | tr '\n' ' ')" "made made " "request after the defrag"
check_eq "$(grep -c 'script: bwrap ' "$T/launched")" 2 "sandboxed thumbnailer runs after the defrag"
new_png=$(field 3 "$(head -n 1 <<<"$out")")
check_eq "$new_png" "$old_png" "cache file of d/frag0/map.png"
check_eq "$($PY "$TOOLS/pngcheck.py" bands "$T/old.png") $($PY "$TOOLS/pngcheck.py" bands "$new_png")" \
	"$runs 1" "bands of the thumbnail before and after the defrag"
check_eq "$($PY "$TOOLS/pngcheck.py" bands "$(field 3 "$(tail -n 1 <<<"$out")")")" 1 \
	"bands of the map.svg thumbnail after the defrag"

stop_e4infofs
log "ok: $runs runs -> 1, thumbnails at 128 and 256 px made in the sandbox"
