#!/usr/bin/env bash
# The man page renders without a warning from groff (man --warnings).
set -euo pipefail
page=$1
out=$(man --warnings -l "$page" 2>&1 >/dev/null) || { echo "man failed on $page"; exit 1; }
if [ -n "$out" ]; then
	echo "warnings in $page:"
	echo "$out"
	exit 1
fi
# Every option of e4infofs --help is documented in the page.
for opt in $("$2" --help | sed -n 's/^ *-o \([a-z_]*\)=.*/\1/p'); do
	grep -q -- "$opt" "$page" || { echo "option $opt missing from $page"; exit 1; }
done
echo "1 passed, 0 failed"
