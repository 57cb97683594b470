#!/usr/bin/env bash
# Feeds the `metrics` file of an e4infofs mount to prometheus-node-exporter's
# textfile collector: copies it to DIR/NAME.prom every INTERVAL seconds, or
# once with -1 (for a systemd timer or cron).
#
#   node-exporter.sh [-1] [-i INTERVAL] MOUNT [DIR [NAME]]
#
#   MOUNT     an e4infofs mount point (its root, where `metrics` is)
#   DIR       the collector's directory (default: Debian's
#             /var/lib/prometheus/node-exporter, which its
#             prometheus-node-exporter service reads)
#   NAME      file name without .prom (default: e4infofs); give each mount
#             its own name
#   -1        copy once and exit
#   -i        seconds between copies (default 60)
#
# The copy adds the source label of the gauges to the daemon's counters
# (e4infofs_scans_total, e4infofs_defrag_*_total, ...), which have none:
# so the copies of several mounts can feed one node_exporter.
# Each copy is written to a hidden temporary file in DIR and renamed over
# NAME.prom, so node_exporter never reads half a file. When `metrics`
# cannot be read (the mount is gone), NAME.prom is removed rather than
# left stale, so the series disappear and an alert on absent() can fire.
# node_exporter itself reads DIR at every scrape: no restart is needed.
set -uo pipefail
export LC_ALL=C

prog=${0##*/}
usage() {
	echo "usage: $prog [-1] [-i INTERVAL] MOUNT [DIR [NAME]]" >&2
	exit 2
}

once=0 interval=60
while getopts "1i:h" opt; do
	case $opt in
	1) once=1 ;;
	i) interval=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 3 ] || usage
mnt=${1%/}
[ -n "$mnt" ] || mnt=/
dir=${2:-/var/lib/prometheus/node-exporter}
name=${3:-e4infofs}
[[ $interval =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "$prog: bad INTERVAL '$interval'" >&2; exit 2; }
case $name in "" | */* | .*) echo "$prog: NAME must be a file name (no /, not starting with .)" >&2; exit 2 ;; esac
[ -d "$dir" ] || { echo "$prog: $dir is not a directory" >&2; exit 2; }

out=$dir/$name.prom
tmp=$dir/.$name.prom.$$
sleeper=""
trap 'rm -f "$tmp"; [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# label: adds the source="..." label of the gauges to the samples that have
# none (the daemon's counters), so that the copies of several mounts can
# sit side by side: node_exporter refuses two samples of one series.
label() {
	awk '
		{ line[++n] = $0 }
		src == "" && /^e4infofs_/ && match($0, /[{,]source="([^"\\]|\\.)*"/) {
			src = substr($0, RSTART + 1, RLENGTH - 1)
		}
		END {
			for (i = 1; i <= n; i++) {
				l = line[i]
				if (src != "" && l ~ /^e4infofs_/ && l !~ /[{,]source="/) {
					if (l ~ /^[^ {]*\{/) {
						p = index(l, "{")
						l = substr(l, 1, p) src "," substr(l, p + 1)
					} else {
						p = index(l, " ")
						l = substr(l, 1, p - 1) "{" src "}" substr(l, p)
					}
				}
				print l
			}
		}'
}

# refresh: one copy; status 0 if it was written.
refresh() {
	# `metrics` reports size 0 but cat reads it whole (direct_io).
	if cat "$mnt/metrics" 2>/dev/null | label >"$tmp" && [ -s "$tmp" ] && grep -q '^e4infofs_' "$tmp"; then
		chmod 644 "$tmp" && mv -f "$tmp" "$out" && return 0
	fi
	rm -f "$tmp"
	if [ -e "$out" ]; then
		rm -f "$out"
		echo "$prog: cannot read $mnt/metrics: removed $out" >&2
	else
		echo "$prog: cannot read $mnt/metrics" >&2
	fi
	return 1
}

if [ "$once" = 1 ]; then
	refresh
	exit
fi
while :; do
	refresh
	sleep "$interval" &
	sleeper=$!
	wait "$sleeper" # (so a signal is handled at once)
	sleeper=""
done
