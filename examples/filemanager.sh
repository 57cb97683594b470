#!/bin/sh
# For a file manager user: the scores of everything in a directory of an
# e4infofs mount, most fragmented first. The whole idea is one line, to
# type in a terminal opened in a directory of the mount:
#
#   for e in */; do printf '%s\t%s\n' "$(cat "$e/score")" "$e"; done | sort -rn
#
# This script does the same for DIR (default: the current directory, which
# is where file managers start their "scripts" and "custom actions"),
# telling directories (name/) from files (name), and, when it is started
# from a desktop without a terminal and zenity is installed, shows the
# list in a window:
#
#   filemanager.sh [DIR]
#
# Nautilus: copy it to ~/.local/share/nautilus/scripts/Fragmentation;
# Thunar: Edit > Configure custom actions, command `filemanager.sh %f`;
# Dolphin/Konsole, mc, ranger: run it in the directory.
dir=${1:-.}
[ -f "$dir/score" ] || { echo "${0##*/}: $dir is not a directory of an e4infofs mount" >&2; exit 2; }
list=$(
	cd "$dir" || exit 1
	for e in */ .[!.]*/ ..?*/; do
		[ -r "$e/score" ] || continue
		e=${e%/}
		# A directory has `report`; a regular file's directory has not.
		[ -e "$e/report" ] && e="$e/"
		printf '%s\t%s\n' "$(cat "$e/score")" "$e"
	done | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2
)
if [ ! -t 1 ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && command -v zenity >/dev/null 2>&1; then
	printf '%s\n' "$list" | tr '\t' '\n' |
		zenity --list --title="Fragmentation of $(cd "$dir" && pwd)" --column=score --column=name \
			--width=500 --height=600 >/dev/null
elif [ -n "$list" ]; then
	printf '%s\n' "$list"
fi
