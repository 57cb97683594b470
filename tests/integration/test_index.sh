#!/usr/bin/env bash
# index.html in headless Chromium: a true fixed size; the DOM holds the
# directory's score (the same as its score file), its map inline, its most
# fragmented files and its subdirectories (by score, highest first), and
# every link resolves in the mirror, also for names that must be escaped
# (a real file called map.png is @map.png there); a screenshot works.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd chromium python3
PNGCHECK=$(dirname "$0")/../tools/pngcheck.py
setup_image 128

mkdir -p "$SRC/d/sub" "$SRC/e" "$SRC/sp ace&<x>"
"$MKFRAG" frag "$SRC/d" frag 4 512 64
"$MKFRAG" frag "$SRC/d/sub" s 2 128 16
"$MKFRAG" frag "$SRC/e" one 1 512 64
"$MKFRAG" frag "$SRC/sp ace&<x>" f 2 256 16
mv "$SRC/sp ace&<x>/f1" "$SRC/sp ace&<x>/map.png"
sync
start_e4infofs -o timeout=0

chrome() {
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" "$@" 2>>"$T/chrome.log"
}

i=0
for dir in "" d "sp ace&<x>"; do
	page="$MNT/${dir:+$dir/}index.html"
	check_eq "$(stat -c %s "$page")" 262144 "stat size of $dir/index.html"
	check_eq "$(wc -c <"$page")" 262144 "bytes read of $dir/index.html"
	url="file://$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$page")"
	dom=$T/dom$i.html
	i=$((i + 1))
	chrome --dump-dom "$url" >"$dom" || fail "chromium --dump-dom $dir/index.html"
	score=$(cat "$MNT/${dir:+$dir/}score")
	grep -q "id=\"score\">$score<" "$dom" || fail "$dir/index.html: score $score not in the DOM"
	grep -q '<svg' "$dom" || fail "$dir/index.html: no inline map"
	grep -q "score $score " "$dom" || fail "$dir/index.html: the map's score"
	if grep -q '<script src\|<link \|<img src="http\|@import' "$dom"; then
		fail "$dir/index.html loads something from elsewhere"
	fi
	# Every link is relative and resolves in the mirror.
	python3 - "$dom" "$MNT/$dir" <<'PY' || fail "$dir/index.html: links"
import html, os, re, sys, urllib.parse
dom, base = sys.argv[1], sys.argv[2]
links = [html.unescape(h) for h in re.findall(r'href="([^"]*)"', open(dom).read())]
assert len(links) >= 4, "only %d links" % len(links)
for h in links:
    assert ":" not in h and not h.startswith("/"), "not relative: " + h
    t = os.path.join(base, urllib.parse.unquote(h))
    assert os.path.exists(t), "does not resolve: %s (%s)" % (h, t)
PY
done

# The root lists its subdirectories by score, highest first, each
# linking to its own page; fragmented files link to their maps.
want=$(for d in d e "sp ace&<x>"; do echo "$(cat "$MNT/$d/score")"; done | sort -rn | tr '\n' ' ')
got=$(python3 - "$T/dom0.html" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
body = html.split('id="subdirs"', 1)[1].split('</table>', 1)[0]
print(" ".join(re.findall(r'index\.html">[^<]*</a></td><td>(\d+)</td>', body)), end=" ")
PY
)
check_eq "$got" "$want" "subdirectory scores in order"
grep -q 'href="d/frag0/map.svg"' "$T/dom0.html" || fail "root: d/frag0 not linked to its map"
grep -q 'href="sp%20ace%26%3Cx%3E/index.html"' "$T/dom0.html" || fail "root: 'sp ace&<x>' not linked"
grep -q 'href="%40map.png/map.svg"' "$T/dom2.html" || fail "a file called map.png is not linked as @map.png"

# The inline script sorts: a copy of the root page with a click on the
# subdirectories' score header appended lists them lowest first.
cp "$MNT/index.html" "$T/sort.html"
cat >>"$T/sort.html" <<'HTML'
<script>document.querySelectorAll('#subdirs th')[1].click();</script>
HTML
chrome --dump-dom "file://$T/sort.html" >"$T/sorted.html" || fail "chromium --dump-dom of the sorted copy"
got=$(python3 - "$T/sorted.html" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
body = html.split('id="subdirs"', 1)[1].split('</table>', 1)[0]
print(" ".join(re.findall(r'index\.html">[^<]*</a></td><td>(\d+)</td>', body)), end=" ")
PY
)
check_eq "$got" "$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort -n | tr '\n' ' ')" "subdirectory scores after a click on score"

# A screenshot.
(cd "$T" && chrome --screenshot="$T/shot.png" --window-size=1000,1400 "file://$MNT/d/index.html") ||
	fail "chromium --screenshot"
check_eq "$(python3 "$PNGCHECK" size "$T/shot.png")" "1000 1400" "screenshot size"
