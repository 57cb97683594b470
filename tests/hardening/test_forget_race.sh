#!/usr/bin/env bash
# A file with two names, P/F and Q/F: its node remembers the directory it
# was last looked up in (Q), whose node the kernel may forget at any time
# (dentries dropped), while another thread opens P/F/score and looks that
# directory up to check F is still inside SOURCE. 6 threads open
# P/F/score, 2 stat Q/F, one drops the dentry and inode caches, for
# E4INFO_RACE_SECONDS (default 15). The daemon must stay up, answer, and
# exit cleanly (under ASan: no use-after-free; before the fix it read the
# forgotten directory's freed node within 15 s, 2 runs of 2).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
require_root
require_cmd python3
SECS=${E4INFO_RACE_SECONDS:-15}
setup_image 64

mkdir -p "$SRC/P" "$SRC/Q"
head -c 1M /dev/urandom >"$SRC/P/F"
ln "$SRC/P/F" "$SRC/Q/F"
sync
start_e4infofs -o timeout=1000
python3 - "$MNT" "$SECS" <<'PY' || fail "the race failed"
import os, sys, threading, time
mnt, secs = sys.argv[1], float(sys.argv[2])
hold = os.open(f"{mnt}/P/F/score", os.O_RDONLY)
stop = time.time() + secs
errors = {}
def opener():
    while time.time() < stop:
        try:
            os.close(os.open(f"{mnt}/P/F/score", os.O_RDONLY))
        except OSError as e:
            errors[e.errno] = errors.get(e.errno, 0) + 1
def stater():
    while time.time() < stop:
        try:
            os.stat(f"{mnt}/Q/F")
        except OSError:
            pass
def dropper():
    while time.time() < stop:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
threads = [threading.Thread(target=opener) for _ in range(6)]
threads += [threading.Thread(target=stater) for _ in range(2)]
threads.append(threading.Thread(target=dropper))
for t in threads:
    t.start()
for t in threads:
    t.join()
os.close(hold)
print(f"open errors by errno: {errors}", file=sys.stderr)
# ENOTCONN: the daemon died.
sys.exit(1 if errors.get(107) else 0)
PY
kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died"
score=$(cat "$MNT/P/F/score") || fail "P/F/score unreadable after the race"
[[ $score =~ ^[0-9]+$ ]] || fail "P/F/score after the race: '$score'"
stop_e4infofs
log "ok"
