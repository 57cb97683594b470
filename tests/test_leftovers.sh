#!/usr/bin/env bash
# Run last (priority -1000): no test left a mount (FUSE or ext4) under a
# test directory (${TMPDIR:-/tmp}/e4infofs-*), a loop device on an image
# there, or a daemon of the build. Each test cleans up after itself, also
# when it fails; this catches the one that did not.
set -uo pipefail
TEST_NAME=leftovers
base=${TMPDIR:-/tmp}/e4infofs-
if [ "$(id -u)" -ne 0 ]; then
	[ "${E4INFO_REQUIRE_PRIVILEGED:-0}" = 1 ] && { echo "FAIL [$TEST_NAME]: needs root" >&2; exit 1; }
	exit 77
fi
problems=0
mounts=$(findmnt -rn -o TARGET,FSTYPE | grep -F "$base" || true)
if [ -n "$mounts" ]; then
	echo "FAIL [$TEST_NAME]: mounts left by tests:" >&2
	echo "$mounts" >&2
	problems=1
fi
loops=$(losetup -a | grep -F "$base" || true)
if [ -n "$loops" ]; then
	echo "FAIL [$TEST_NAME]: loop devices left by tests:" >&2
	echo "$loops" >&2
	problems=1
fi
daemons=$(pgrep -a -x e4infofs | grep -F "$base" || true)
if [ -n "$daemons" ]; then
	echo "FAIL [$TEST_NAME]: daemons left by tests:" >&2
	echo "$daemons" >&2
	problems=1
fi
[ "$problems" = 0 ] && echo "no mount, loop device or daemon left under ${base}*"
exit "$problems"
