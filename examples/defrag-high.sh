#!/usr/bin/env bash
# Defragments the top-level directories of an e4infofs mount whose score
# is above a threshold, one after the other, and prints what it did.
#
#   defrag-high.sh [-n] [-s SECONDS] MOUNT [THRESHOLD]
#
#   MOUNT      an e4infofs mount point (e.g. /mnt/e4info or /run/e4infofs/home)
#   THRESHOLD  0-100; directories scoring more are defragmented (default 55:
#              e4defrag's "needs defrag" band starts at 56)
#   -n         only print what would be done
#   -s SECONDS a window for the whole run: each job gets the time left of
#              it as its deadline (`echo "1 seconds=LEFT"`), and once it is
#              used up the remaining directories wait. A job stopped by the
#              window is no failure: the daemon records what it finished,
#              and the next run's job on that directory resumes with the
#              rest, worst first (docs/defrag.md#resume), so a nightly
#              window continues the next night.
#
# Each job is `echo 1 > DIR/defrag` (it returns when the job ends); its
# result is then read back from DIR/defrag. Files at the top level of the
# mount and directories at or below the threshold are left alone. Ctrl-C
# (or SIGTERM) cancels the running job at its next 4 MiB chunk and stops.
#
# Exit status: 0 when every job succeeded (or none was needed), 1 when a
# job failed (a file failed, EBUSY, EROFS, ...), 2 on bad usage, 130/143
# when interrupted. Meant for cron (examples/cron.example) and for the
# e4infofs-defrag@.timer of dist/systemd/.
set -uo pipefail
export LC_ALL=C

prog=${0##*/}
usage() {
	echo "usage: $prog [-n] [-s SECONDS] MOUNT [THRESHOLD]" >&2
	exit 2
}

dry_run=0 window=""
while getopts "ns:h" opt; do
	case $opt in
	n) dry_run=1 ;;
	s) window=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
mnt=${1%/}
[ -n "$mnt" ] || mnt=/
threshold=${2:-55}
[[ $threshold =~ ^[0-9]+$ ]] && [ "$threshold" -le 100 ] ||
	{ echo "$prog: THRESHOLD must be an integer 0-100, not '$threshold'" >&2; exit 2; }
[ -z "$window" ] || { [[ $window =~ ^[0-9]+$ ]] && [ "$window" -ge 1 ]; } ||
	{ echo "$prog: SECONDS must be a positive integer, not '$window'" >&2; exit 2; }
# The root of an e4infofs mount has `jobs` and `metrics`.
if [ ! -f "$mnt/jobs" ] || [ ! -f "$mnt/metrics" ]; then
	echo "$prog: $mnt is not the root of an e4infofs mount" >&2
	exit 2
fi

trap 'echo "$prog: interrupted" >&2; exit 130' INT
trap 'echo "$prog: terminated" >&2; exit 143' TERM

# show NAME: a name on one line (newlines and tabs of odd names escaped).
show() {
	local s=${1//\\/\\\\}
	s=${s//$'\n'/\\n}
	printf '%s' "${s//$'\t'/\\t}"
}

# key FILE-CONTENT KEY: value of "KEY: value".
key() {
	sed -n "s/^$2: //p" <<<"$1" | head -n 1
}

checked=0 done_jobs=0 failed=0 stopped=0 waiting=0
window_start=$SECONDS
shopt -s nullglob dotglob
for d in "$mnt"/*/; do
	d=${d%/}
	# A directory has `report`; a regular file's directory has not.
	[ -e "$d/report" ] || continue
	name=$(show "${d##*/}")
	checked=$((checked + 1))
	if ! read -r score <"$d/score" 2>/dev/null || ! [[ $score =~ ^[0-9]+$ ]]; then
		echo "$name: cannot read its score"
		failed=$((failed + 1))
		continue
	fi
	if [ "$score" -le "$threshold" ]; then
		echo "$name: score $score <= $threshold, left alone"
		continue
	fi
	if [ "$dry_run" = 1 ]; then
		echo "$name: score $score > $threshold, would defragment"
		continue
	fi
	line=1
	if [ -n "$window" ]; then
		left=$((window - (SECONDS - window_start)))
		if [ "$left" -le 0 ]; then
			echo "$name: score $score > $threshold, waits: the window of $window s is used up"
			waiting=$((waiting + 1))
			continue
		fi
		line="1 seconds=$left"
	fi
	echo "$name: score $score > $threshold, defragmenting${window:+ (at most $left s)}"
	start=$SECONDS
	if err=$({ printf '%s\n' "$line" >"$d/defrag"; } 2>&1); then
		ok=1
	else
		ok=0
		err=${err##*: }   # bash's "...: write error: Input/output error" -> the errno text
	fi
	status=$(cat "$d/defrag" 2>/dev/null)
	after=$(cat "$d/score" 2>/dev/null)
	summary="improved $(key "$status" improved), optimal $(key "$status" optimal), no-gain $(key "$status" no-gain), skipped $(key "$status" skipped), failed $(key "$status" failed)"
	summary+="; runs $(key "$status" runs_before) -> $(key "$status" runs_after)"
	summary+="; $(key "$status" bytes_moved) bytes moved in $(key "$status" seconds) s; score now $after"
	if [ "$ok" = 1 ] && [ "$(key "$status" state)" = stopped ]; then
		stopped=$((stopped + 1))
		echo "$name: stopped at the end of the window, $(key "$status" bytes_left) bytes left for the next run: $summary"
	elif [ "$ok" = 1 ]; then
		done_jobs=$((done_jobs + 1))
		echo "$name: done: $summary"
	else
		failed=$((failed + 1))
		echo "$name: FAILED after $((SECONDS - start)) s: ${err:-unknown error} (state: $(key "$status" state))"
		e=$(key "$status" error)
		[ -n "$e" ] && echo "$name: first error: $e"
		[ -n "$(key "$status" files)" ] && echo "$name: $summary"
	fi
done
echo "summary: $checked directories checked, threshold $threshold, $done_jobs defragmented, $failed failed${window:+, $stopped stopped and $waiting waiting at the end of the window}"
[ "$failed" -eq 0 ]
