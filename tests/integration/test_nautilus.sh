#!/usr/bin/env bash
# A real file manager on the mount (issue 16): Nautilus as uid 65534,
# under Xvfb in a D-Bus session of its own, opens a file's node of a root
# daemon's mount (-o allow_other) in icon view. Screenshots of the screen
# are read for file maps (tests/tools/pngcheck.py strips): with
# thumbnails on, map.png and map.svg are drawn as the file's strip, one
# band per run; with thumbnails off (the control: the same window), no
# map colour is drawn, so the check tells a thumbnail from an icon. The
# thumbnails are in the user's cache, none failed. After a defrag,
# Nautilus opened again draws the maps anew (one band; map-before.* now
# show the 8 runs of before the job).
# E4INFO_SCREENSHOT=FILE.png keeps the screenshot (docs/img/nautilus.png).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd setpriv bwrap Xvfb nautilus dbus-run-session import convert
PY=/usr/bin/python3
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
setup_image 64

mkdir -p "$SRC/d"
"$MKFRAG" frag "$SRC/d" frag 4 512 64     # 8 runs each, interleaved
sync
start_e4infofs -o allow_other -o timeout=0
desktop_user 65534
CACHE=$T/desktop/home/.cache/thumbnails
SHOTS=$T/desktop # screenshots: written by the user
runs=$(filefrag_count "$SRC/d/frag0")
check "d/frag0 fragmented: $runs runs" [ "$runs" -ge 4 ]

# The X server, as the user; -displayfd: it picks a free display and
# writes its number once it accepts clients. Its socket directory is
# made by root when missing, as at boot (a user's would be left theirs).
[ -d /tmp/.X11-unix ] || install -d -m 1777 -o root -g root /tmp/.X11-unix
as_desktop Xvfb -displayfd 3 -screen 0 1024x640x24 -nolisten tcp 3>"$T/display" 2>"$T/xvfb.log" &
for ((i = 0; i < 100; i++)); do
	[ -s "$T/display" ] && break
	kill -0 $! 2>/dev/null || fail "Xvfb exited: $(tail -n 3 "$T/xvfb.log")"
	sleep 0.1
done
DPY=:$(head -n 1 "$T/display")
[ "$DPY" != : ] || fail "Xvfb gave no display within 10 s"

# settings THUMBNAILS: Nautilus's settings (keyfile backend, desktop_user):
# icon view at its default zoom, thumbnails 'local-only' (its default)
# or 'never'.
settings() {
	cat >"$T/desktop/home/.config/glib-2.0/settings/keyfile" <<EOF
[org/gnome/nautilus/preferences]
default-folder-viewer='icon-view'
show-image-thumbnails='$1'
EOF
}

# browse DIR: Nautilus in a new D-Bus session showing DIR; sets NAUTILUS.
NAUTILUS=""
browse() {
	desktop_cmd DISPLAY="$DPY" GDK_BACKEND=x11 GSK_RENDERER=cairo \
		dbus-run-session -- nautilus --new-window "$1"
	# Its own process group (setsid execs: same pid), ended as one.
	setsid "${DESKTOP_CMD[@]}" >>"$T/nautilus.log" 2>&1 &
	NAUTILUS=$!
}

# quit: ends Nautilus, its D-Bus session and what they started.
quit() {
	kill -TERM -- "-$NAUTILUS" 2>/dev/null || true
	wait "$NAUTILUS" 2>/dev/null || true
	_end_desktop_but_x
}
# Every process of the desktop user's session except the X server.
_end_desktop_but_x() {
	local p pids=""
	for p in $(_desktop_pids "$DESKTOP_HOME"); do
		grep -qx Xvfb "/proc/$p/comm" 2>/dev/null || pids+=" $p"
	done
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	sleep 0.5
	return 0
}

# shot FILE.ppm: the whole screen.
shot() {
	as_desktop DISPLAY="$DPY" import -window root -depth 8 "ppm:$1" 2>>"$T/import.log" ||
		fail "import -window root on $DPY: $(tail -n 2 "$T/import.log")"
}

# strips_seen SECONDS BANDS: screenshots until two file maps of BANDS
# bands are drawn (or SECONDS pass); prints the strips of the last one.
strips_seen() {
	local end=$((SECONDS + $1)) s="" runs=$2
	while [ $SECONDS -lt $end ]; do
		sleep 1
		kill -0 "$NAUTILUS" 2>/dev/null || fail "Nautilus exited: $(tail -n 5 "$T/nautilus.log")"
		shot "$SHOTS/shot.ppm"
		s=$($PY "$TOOLS/pngcheck.py" strips "$SHOTS/shot.ppm") || fail "pngcheck.py strips on a screenshot"
		[ "$(awk -v r="$runs" '$5 == r' <<<"$s" | wc -l)" -ge 2 ] && break
	done
	echo "$s"
}

# The control: thumbnails off. Once the window shows its 10 entries, no
# map is drawn.
settings never
browse "$MNT/d/frag0"
up=""
for ((i = 0; i < 30; i++)); do
	sleep 1
	kill -0 "$NAUTILUS" 2>/dev/null || fail "Nautilus exited: $(tail -n 5 "$T/nautilus.log")"
	shot "$SHOTS/control.ppm"
	# The window is up when the screen is no longer one colour.
	[ "$(convert "$SHOTS/control.ppm" -format %k info:)" -gt 16 ] && { up=1; break; }
done
[ -n "$up" ] || fail "no Nautilus window within 30 s: $(tail -n 5 "$T/nautilus.log")"
sleep 2 # the icons of the 10 entries
shot "$SHOTS/control.ppm"
s=$($PY "$TOOLS/pngcheck.py" strips "$SHOTS/control.ppm") || fail "pngcheck.py strips on the control screenshot"
check_eq "$s" "" "file maps drawn with thumbnails off"
check_eq "$(find "$CACHE" -name '*.png' 2>/dev/null | wc -l)" 0 "thumbnails made with thumbnails off"
quit

# Thumbnails on (Nautilus's default): both maps drawn, one band per run.
settings local-only
browse "$MNT/d/frag0"
t0=$SECONDS
s=$(strips_seen 45 "$runs")
log "screenshots taken for $((SECONDS - t0)) s"
log "strips (x y w h bands) on the screen: $(tr '\n' ';' <<<"$s")"
if [ -n "${E4INFO_SCREENSHOT:-}" ]; then # also when the checks fail
	convert "$SHOTS/shot.ppm" "$E4INFO_SCREENSHOT"
fi
maps=$(awk -v r="$runs" '$5 == r' <<<"$s" | wc -l)
check "two file maps of $runs bands drawn (strips: $(tr '\n' ';' <<<"$s"))" [ "$maps" -ge 2 ]
thumbs=$(find "$CACHE" -name '*.png' -not -path '*/fail/*' | wc -l)
check "thumbnails in the user's cache: $thumbs" [ "$thumbs" -ge 2 ]
check_eq "$(find "$CACHE" -path '*/fail/*' -type f 2>/dev/null | wc -l)" 0 "failed thumbnails"
log "cache: $(cd "$CACHE" && find . -name '*.png' | sort | tr '\n' ' ')"
quit

# After a defrag (a new mtime; the cache keeps whole seconds), Nautilus
# opened again finds its thumbnails stale and draws new ones: one band.
# (Whether a window left open redraws them by itself is not checked.)
sleep 1.1
echo 1 >"$MNT/d/frag0/defrag"
check_eq "$(filefrag_count "$SRC/d/frag0")" 1 "d/frag0 after defrag"
browse "$MNT/d/frag0"
s=$(strips_seen 45 1)
log "after the defrag, strips on the screen: $(tr '\n' ';' <<<"$s")"
check "two file maps of 1 band drawn after the defrag (strips: $(tr '\n' ';' <<<"$s"))" \
	[ "$(awk '$5 == 1' <<<"$s" | wc -l)" -ge 2 ]
quit
stop_e4infofs
log "ok: $maps maps of $runs bands drawn by Nautilus, of 1 band after the defrag, none with thumbnails off"
