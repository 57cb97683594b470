#!/usr/bin/env bash
# Lists the N directories of an e4infofs mount with the highest score,
# from the directories just below MOUNT (depth 1) or down to DEPTH levels.
#
#   worst-dirs.sh [-d DEPTH] MOUNT [N]
#
#   MOUNT  an e4infofs mount point, or any directory inside one
#   N      how many to list (default 10; 0 lists all)
#   -d     how deep to look (default 1: the directories just below MOUNT)
#
# Output, highest score first (ties in the order of a depth-first walk,
# names sorted), one line each:
#
#   # score files fragmented_files runs layout_score path
#   83 4 4 448 0.8263 var
#   81 3 3 384 0.7500 var/log
#
# The figures come from each directory's `stats` (one open, so they are
# consistent); paths are relative to MOUNT, with newlines, tabs and
# backslashes of odd names escaped as \n, \t and \\.
set -uo pipefail
export LC_ALL=C

prog=${0##*/}
usage() {
	echo "usage: $prog [-d DEPTH] MOUNT [N]" >&2
	exit 2
}

depth=1
while getopts "d:h" opt; do
	case $opt in
	d) depth=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] && [ $# -le 2 ] || usage
mnt=${1%/}
[ -n "$mnt" ] || mnt=/
n=${2:-10}
[[ $n =~ ^[0-9]+$ ]] || { echo "$prog: N must be a number, not '$n'" >&2; exit 2; }
[[ $depth =~ ^[1-9][0-9]*$ ]] || { echo "$prog: DEPTH must be 1 or more, not '$depth'" >&2; exit 2; }
# Any directory of an e4infofs mount has `report` and `stats`.
if [ ! -f "$mnt/report" ] || [ ! -f "$mnt/stats" ]; then
	echo "$prog: $mnt is not a directory of an e4infofs mount" >&2
	exit 2
fi

show() {
	local s=${1//\\/\\\\}
	s=${s//$'\n'/\\n}
	printf '%s' "${s//$'\t'/\\t}"
}

# walk DIR REL LEVEL: one line per directory below DIR, down to $depth.
walk() {
	local dir=$1 rel=$2 level=$3 e name stats
	for e in "$dir"/*/; do
		e=${e%/}
		# A directory has `report`; a regular file's directory has not.
		[ -e "$e/report" ] || continue
		name=$rel$(show "${e##*/}")
		if stats=$(cat "$e/stats" 2>/dev/null); then
			# (the name through the environment: awk -v would unescape it)
			P=$name awk -F': ' '
				{ v[$1] = $2 }
				END { print v["score"], v["files"], v["fragmented_files"], v["runs"], v["layout_score"], ENVIRON["P"] }' <<<"$stats"
		else
			echo "$prog: cannot read $e/stats" >&2
		fi
		if [ "$level" -lt "$depth" ]; then
			walk "$e" "$name/" $((level + 1))
		fi
	done
	return 0
}

shopt -s nullglob dotglob
echo "# score files fragmented_files runs layout_score path"
# (awk rather than head, which would cut the pipe of a long listing)
walk "$mnt" "" 1 | sort -s -k1,1nr | awk -v n="$n" 'n == 0 || NR <= n'
