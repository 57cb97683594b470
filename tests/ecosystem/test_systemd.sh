#!/usr/bin/env bash
# The units of dist/systemd/: `systemd-analyze verify` accepts each (no
# error, no warning) for plain and escaped instance names, with the paths
# they name present as after `meson install` (copies in a temporary root);
# their paths are the ones meson installs to. Then their commands run as
# systemd would run them (tests/ecosystem/unit_cmds.py: words, specifiers
# and $VARs expanded as systemd does; PID 1 here is not systemd) for the
# instance of a temporary source whose escaped name has a \x2d:
# e4infofs@ mounts on its runtime directory, ExecStartPost waits for the
# mount, e4infofs-defrag@ defragments the high-scoring directories,
# e4infofs-metrics@ writes the .prom file, ExecStop unmounts and the
# daemon exits with 0; after a crash (SIGKILL, a dead mount left behind)
# ExecStopPost detaches the dead mount, the runtime directory can be
# removed, and the service starts again.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
UNITS_SRC=$REPO/dist/systemd
CMDS=$HERE/unit_cmds.py
: "${E4_PREFIX:=/usr/local}"
: "${E4_SBINDIR:=/usr/local/sbin}"
: "${E4_LIBEXECDIR:=/usr/local/libexec}"

if ! command -v systemd-analyze >/dev/null; then
	log "installing systemd (for systemd-analyze)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null 2>&1 ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null; } ||
		fail "cannot install systemd"
fi
require_cmd systemd-analyze systemd-escape mountpoint

UNITS="e4infofs@.service e4infofs-defrag@.service e4infofs-defrag@.timer e4infofs-metrics@.service e4infofs-metrics@.timer"
for u in $UNITS; do
	[ -f "$UNITS_SRC/$u" ] || fail "missing $UNITS_SRC/$u"
done

# ---- the paths are meson's ------------------------------------------------------------------
if [ "$E4_PREFIX" = /usr/local ]; then
	grep -q "^ExecStart=$E4_SBINDIR/e4infofs " "$UNITS_SRC/e4infofs@.service" ||
		fail "e4infofs@.service does not run $E4_SBINDIR/e4infofs (where meson installs it)"
	grep -q "^ExecStart=$E4_LIBEXECDIR/e4infofs/defrag-high.sh " "$UNITS_SRC/e4infofs-defrag@.service" ||
		fail "e4infofs-defrag@.service does not run $E4_LIBEXECDIR/e4infofs/defrag-high.sh"
	grep -q "^ExecStart=$E4_LIBEXECDIR/e4infofs/node-exporter.sh " "$UNITS_SRC/e4infofs-metrics@.service" ||
		fail "e4infofs-metrics@.service does not run $E4_LIBEXECDIR/e4infofs/node-exporter.sh"
else
	log "prefix $E4_PREFIX: the units name /usr/local paths, not checked against meson's"
fi
# Every /usr/local path of the units is one of these (copied below).
others=$(grep -ho '/usr/local/[^ ]*' "$UNITS_SRC"/* | sort -u |
	grep -vxF -e /usr/local/sbin/e4infofs -e /usr/local/libexec/e4infofs/defrag-high.sh \
		-e /usr/local/libexec/e4infofs/node-exporter.sh || true)
check_eq "$others" "" "other /usr/local paths in the units"

# ---- a temporary root as after meson install ---------------------------------------------------
make_tmpdir
ROOT=$T/root
mkdir -p "$ROOT/usr/local/sbin" "$ROOT/usr/local/libexec/e4infofs" "$T/units" "$T/run" "$T/textfile"
cp "$E4INFOFS" "$ROOT/usr/local/sbin/e4infofs"
cp "$REPO/examples/defrag-high.sh" "$REPO/examples/node-exporter.sh" "$ROOT/usr/local/libexec/e4infofs/"
for u in $UNITS; do
	sed -e "s|/usr/local/|$ROOT/usr/local/|g" -e "s|/run/e4infofs/|$T/run/e4infofs/|g" \
		"$UNITS_SRC/$u" >"$T/units/$u"
done

# ---- systemd-analyze verify ---------------------------------------------------------------------
verify() {
	local unit=$1 out rc=0
	out=$(cd "$T/units" && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$T/units/$unit" 2>&1) || rc=$?
	[ "$rc" = 0 ] && [ -z "$out" ] || fail "systemd-analyze verify $unit: status $rc: $out"
}
setup_image 128
mkdir -p "$SRC/hot" "$SRC/cold"
"$MKFRAG" frag "$SRC/hot" f 3 1024 4
"$MKFRAG" frag "$SRC/cold" c 1 2048 2048
sync
INST=$(systemd-escape --path "$SRC")
[[ $INST == *'\x2d'* ]] || fail "the instance of $SRC has no \\x2d: $INST"
check_eq "$(systemd-escape --unescape --path "$INST")" "$SRC" "unescaped instance"
for inst in home "srv-my\\x2ddata" - "$INST"; do
	for u in $UNITS; do
		verify "${u/@./@$inst.}"
	done
done
# A broken unit must not pass (the check above can fail).
sed 's|^ExecStart=.*|ExecStart=/nonexistent/e4infofs -f %f /x|' "$T/units/e4infofs@.service" >"$T/units/broken@.service"
rc=0
out=$(cd "$T/units" && systemd-analyze verify --man=no "$T/units/broken@x.service" 2>&1) || rc=$?
[ "$rc" != 0 ] || [ -n "$out" ] || fail "systemd-analyze verify accepts a unit with a missing ExecStart binary"
rm "$T/units/broken@.service"
systemd-analyze calendar "$(sed -n 's/^OnCalendar=//p' "$UNITS_SRC/e4infofs-defrag@.timer")" >/dev/null ||
	fail "OnCalendar of e4infofs-defrag@.timer"
log "systemd-analyze verify: $(wc -w <<<"$UNITS") units, 4 instances: ok"

# ---- the commands, as systemd runs them -----------------------------------------------------------
svc=$T/units/e4infofs@.service
MNTDIR=$T/run/$(python3 "$CMDS" get "$svc" "$INST" RuntimeDirectory)
check_eq "$MNTDIR" "$T/run/e4infofs/$INST" "runtime directory = mount point"
DAEMON=""
# start: RuntimeDirectory=, ExecStartPre=, ExecStart= (main process), ExecStartPost=.
start_service() {
	[ ! -e "$MNTDIR" ] && mkdir -p "$MNTDIR" || fail "cannot create the runtime directory (left over?)"
	python3 "$CMDS" run "$svc" "$INST" ExecStartPre 2>>"$T/service.log" || fail "ExecStartPre failed: $(cat "$T/service.log")"
	python3 "$CMDS" exec "$svc" "$INST" ExecStart >>"$T/service.log" 2>&1 &
	DAEMON=$!
	on_cleanup "kill $DAEMON"
	on_cleanup "fusermount3 -u -z '$MNTDIR'" # (lib.sh's cleanup misses names with a backslash)
	python3 "$CMDS" run "$svc" "$INST" ExecStartPost 2>>"$T/service.log" || fail "ExecStartPost failed: $(cat "$T/service.log")"
	check_eq "$(findmnt -n -o SOURCE,FSTYPE --mountpoint "$MNTDIR")" "$SRC fuse.e4infofs" "mount of the service"
	findmnt -n -o OPTIONS --mountpoint "$MNTDIR" | grep -q allow_other || fail "the service's mount has no allow_other"
	kill -0 "$DAEMON" || fail "the daemon is not the main process"
}
# stop (after ExecStop= or a crash): ExecStopPost=, then the runtime
# directory is removed (systemd removes it recursively: a mount on it
# would stop that).
stopped_service() {
	python3 "$CMDS" run "$svc" "$INST" ExecStopPost 2>>"$T/service.log" || fail "ExecStopPost failed"
	mountpoint -q "$MNTDIR" && fail "still mounted after ExecStopPost"
	rmdir "$MNTDIR" || fail "cannot remove the runtime directory after ExecStopPost"
}
start_service
hot_before=$(cat "$MNTDIR/hot/score")
cold_before=$(cat "$MNTDIR/cold/score")
[ "$hot_before" -gt 55 ] || fail "hot/ scores only $hot_before"
[ "$cold_before" -le 55 ] || fail "cold/ scores $cold_before"

# e4infofs-defrag@: defragments hot/, leaves cold/.
out=$(python3 "$CMDS" run "$T/units/e4infofs-defrag@.service" "$INST" ExecStart 2>&1) || fail "e4infofs-defrag@ failed: $out"
grep -q "^hot: done: " <<<"$out" || fail "e4infofs-defrag@ did not defragment hot/: $out"
grep -q "^cold: score $cold_before <= 55, left alone" <<<"$out" || fail "e4infofs-defrag@ and cold/: $out"
[ "$(cat "$MNTDIR/hot/score")" -lt "$hot_before" ] || fail "hot/ still scores $(cat "$MNTDIR/hot/score")"
# ... with another threshold from the environment (as a drop-in would set it).
out=$(python3 "$CMDS" run "$T/units/e4infofs-defrag@.service" "$INST" ExecStart E4INFOFS_THRESHOLD=100 2>&1) ||
	fail "e4infofs-defrag@ with E4INFOFS_THRESHOLD=100 failed: $out"
grep -q "threshold 100, 0 defragmented" <<<"$out" || fail "E4INFOFS_THRESHOLD=100 not used: $out"

# e4infofs-metrics@: the .prom file for node_exporter.
python3 "$CMDS" run "$T/units/e4infofs-metrics@.service" "$INST" ExecStart E4INFOFS_TEXTFILE_DIR="$T/textfile" 2>/dev/null ||
	fail "e4infofs-metrics@ failed"
prom=$T/textfile/e4infofs-$INST.prom
[ -s "$prom" ] || fail "e4infofs-metrics@ wrote no $prom: $(ls -A "$T/textfile")"
grep -q "^e4infofs_score{source=\"$SRC\",dir=\"hot\"} $(cat "$MNTDIR/hot/score")$" "$prom" ||
	fail "$prom has not the score of hot/: $(grep e4infofs_score "$prom")"

# A crash leaves a dead mount: ExecStopPost detaches it, the service starts again.
kill -KILL "$DAEMON"
wait "$DAEMON" 2>/dev/null || true
! cat "$MNTDIR/score" >/dev/null 2>&1 || fail "the mount still answers after SIGKILL of its daemon"
stopped_service
start_service
[[ $(cat "$MNTDIR/score") =~ ^[0-9]+$ ]] || fail "score after the restart"

# stop: ExecStop= unmounts, the daemon exits with 0, ExecStopPost= has nothing to do.
python3 "$CMDS" run "$svc" "$INST" ExecStop 2>>"$T/service.log" || fail "ExecStop failed"
_reap "$DAEMON" 30
check_eq "$REAP_STATUS" 0 "exit status of the daemon after ExecStop"
mountpoint -q "$MNTDIR" && fail "still mounted after ExecStop"
stopped_service
log "ok"
