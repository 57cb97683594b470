#!/usr/bin/env bash
# What opening a node costs in path mode (an unprivileged daemon: openat2
# beneath SOURCE, then name_to_handle_at to check) against handle mode (a
# root daemon: open_by_handle_at), at depth 1, 8 and 32. By hand, as root,
# from a checkout after `ninja -C build`: tests/bench/node_cost.sh [CALLS]
# (default 5000). Two daemons on one tree with -o timeout=0, a root one
# and one as uid 65534; per depth and mount, the median of CALLS fstat()s
# of an fd held on a file's node (each a FUSE GETATTR: one node open +
# fstat in the daemon) and of CALLS open+close of its `extents` (a LOOKUP
# and an OPEN, each opening the node, plus the content). Results in
# docs/design.md.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
require_root
require_cmd setpriv
CALLS=${1:-5000}
setup_image 128 -b 4096
USR=65534
U=$SRC/u
mkdir "$U"
chown $USR:$USR "$U"
as_uid $USR /usr/bin/python3 - "$U" <<'EOF'
import os, sys
d = sys.argv[1]
for depth in range(1, 33):
    if depth in (1, 8, 32):
        with open(os.path.join(d, "f"), "wb") as f:
            f.write(b"x" * 65536)
    d = os.path.join(d, "d")
    os.mkdir(d)
EOF
mount_e4infofs "$U" "$T/root" -o timeout=0
mount_e4infofs_as $USR "$U" "$T/user" -o timeout=0
measure() { # measure MOUNT: "depth getattr_us open_us" per depth
	/usr/bin/python3 - "$1" "$CALLS" <<'EOF'
import os, statistics, sys, time
mnt, calls = sys.argv[1], int(sys.argv[2])
for depth in (1, 8, 32):
    node = os.path.join(mnt, *(["d"] * (depth - 1)), "f")
    fd = os.open(node, os.O_RDONLY | os.O_DIRECTORY)
    g, o = [], []
    for _ in range(calls):
        t = time.perf_counter_ns(); os.fstat(fd); g.append(time.perf_counter_ns() - t)
    for _ in range(calls):
        t = time.perf_counter_ns()
        os.close(os.open("extents", os.O_RDONLY, dir_fd=fd))
        o.append(time.perf_counter_ns() - t)
    os.close(fd)
    print(depth, round(statistics.median(g) / 1000, 1), round(statistics.median(o) / 1000, 1))
EOF
}
echo "# depth getattr_median_us open_extents_median_us ($CALLS calls each)"
for round in 1 2; do
	echo "handle mode (root daemon), round $round:"
	measure "$T/root"
	echo "path mode (uid $USR daemon), round $round:"
	as_uid $USR bash -c "CALLS=$CALLS; $(declare -f measure); measure '$T/user'"
done
stop_e4infofs "$T/user"
stop_e4infofs "$T/root"
