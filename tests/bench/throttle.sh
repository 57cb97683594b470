#!/bin/bash
# throttle.sh - a throttled job on a live filesystem (issue 17): the rate
# cap `mibps=` seen from outside (the loop device's sectors) and from
# inside (the job's bytes_done), and what it leaves to another reader.
#
#   tests/bench/throttle.sh [--e4infofs PATH] [--out FILE] [--corpus-mib N]
#                           [--mibps M] [--threads "4 1"] [--seconds "40 20"]
#                           [--reader-mib N]
#                           (defaults: 3584, 50, "4 1", "40 20", 4096)
#
# One ext4 image (sparse, 2 x corpus + reader + 1 GiB under
# ${BENCH_DIR:-/var/tmp/e4bench}) on a loop device (--direct-io=on):
# a corpus of N MiB (default 3584) of 256 MiB files (N/8 when smaller)
# allocated interleaved in 512 KiB and 1 MiB chunks (mkfrag frag), plus a contiguous reader
# file outside it. Per thread count (-o defrag_threads=T, a mount
# option: the trigger has no threads key), one job
# `echo "1 seconds=S mibps=M" > MNT/corpus/defrag` (each job moves what
# the one before left); every second /sys/block/loopN/stat (sectors read
# and written) and `cat MNT/corpus/defrag` (bytes_done) are sampled, and
# every 5 s window is compared with M MiB/s (+-10%). With the first
# thread count, a reader streams the reader file (dd iflag=direct, caches
# dropped) alone before the job and again 5 s into it: the ratio of its
# throughputs is the job's impact. Writes a markdown report (default
# docs/benchmarks-throttle.md). Exit status 0 when every step worked; a
# missed target is reported (MISS), not a failure.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INVOKED="tests/bench/throttle.sh"
for _a in "$@"; do INVOKED+=" $(printf '%q' "$_a")"; done
E4INFOFS="$REPO/build/fusefs/e4infofs"
MKFRAG="$REPO/build/tests/tools/mkfrag"
OUT="$REPO/docs/benchmarks-throttle.md"
CORPUS_MIB=3584
MIBPS=50
THREADS="4 1"
SECONDS_LIST="40 20"
READER_MIB=4096
while [ $# -gt 0 ]; do
	case $1 in
	--e4infofs) E4INFOFS=${2:?}; MKFRAG=$(dirname "$2")/../tests/tools/mkfrag; shift ;;
	--out) OUT=${2:?}; shift ;;
	--corpus-mib) CORPUS_MIB=${2:?}; shift ;;
	--mibps) MIBPS=${2:?}; shift ;;
	--threads) THREADS=${2:?}; shift ;;
	--seconds) SECONDS_LIST=${2:?}; shift ;;
	--reader-mib) READER_MIB=${2:?}; shift ;;
	*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
	shift
done
. "$HERE/lib.sh"
bench_init throttle
E4INFOFS=$(cd "$(dirname "$E4INFOFS")" && pwd)/$(basename "$E4INFOFS")
{ [ -x "$E4INFOFS" ] && [ -x "$MKFRAG" ]; } || die "build first ($E4INFOFS, $MKFRAG)"
read -r -a THR <<<"$THREADS"
read -r -a SECS <<<"$SECONDS_LIST"
[ ${#THR[@]} -eq ${#SECS[@]} ] || { echo "FAIL [throttle bench]: --threads and --seconds differ in length" >&2; exit 2; }
T_START=$EPOCHREALTIME
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
dkey() { sed -n "s/^$2: //p" "$1" | head -n1; }

# ---- image, corpus, reader file ------------------------------------------------
img=$W/img
truncate -s $((CORPUS_MIB * 2 + READER_MIB + 2048))M "$img"
mkfs.ext4 -q -F -b 4096 -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null || die "mkfs"
attach "$img" "$W/m" --direct-io=on
mkdir -p "$W/f"
STAT=/sys/block/$(basename "$DEV")/stat
mkdir -p "$W/m/corpus/a" "$W/m/corpus/b" "$W/m/other"
t=$EPOCHREALTIME
# The reader's file first, in one piece, written (not fallocated: an
# unwritten extent reads as zeros without touching the disk).
dd if=/dev/zero of="$W/m/other/reader" bs=4M count=$((READER_MIB / 4)) oflag=direct status=none || die "reader file"
FILE_MIB=$((CORPUS_MIB / 8 < 256 ? CORPUS_MIB / 8 : 256))
NFILES=$((CORPUS_MIB / FILE_MIB / 2 * 2))
"$MKFRAG" frag "$W/m/corpus/a" f $((NFILES / 2)) $((FILE_MIB * 1024)) 512 || die "mkfrag a"
"$MKFRAG" frag "$W/m/corpus/b" f $((NFILES / 2)) $((FILE_MIB * 1024)) 1024 || die "mkfrag b"
sync
runs() { find "$1" -type f -exec filefrag {} + | sed -n 's/.*: \([0-9]*\) extents\{0,1\} found/\1/p' | awk '{ s += $1 } END { print s + 0 }'; }
runs_before=$(runs "$W/m/corpus")
reader_runs=$(runs "$W/m/other")
log "corpus: $NFILES files of $FILE_MIB MiB, $runs_before runs; reader file $READER_MIB MiB in $reader_runs runs; made in $(secs_since "$t") s"

# Schedulers: the loop device's and the backing disk's.
sched_loop=$(cat "/sys/block/$(basename "$DEV")/queue/scheduler" 2>/dev/null || echo "?")
backing_src=$(df --output=source "$BENCH_DIR" | tail -n1)
backing=$(lsblk -no pkname "$backing_src" 2>/dev/null | head -n1 || true)
[ -n "$backing" ] || backing=$(basename "$backing_src")
sched_back=$(cat "/sys/block/$backing/queue/scheduler" 2>/dev/null || echo "? ($backing_src)")
log "schedulers: $(basename "$DEV") $sched_loop; $backing $sched_back"

# reader: MiB/s of one cold O_DIRECT read of the reader file; "start end
# MiB/s" into $1.
reader() {
	local a b
	sync
	echo 3 >/proc/sys/vm/drop_caches
	a=$EPOCHREALTIME
	dd if="$W/m/other/reader" of=/dev/null bs=1M iflag=direct status=none || die "reader dd"
	b=$EPOCHREALTIME
	awk -v a="$a" -v b="$b" -v m="$READER_MIB" 'BEGIN { printf "%s %s %.1f\n", a, b, m / (b - a) }' >"$1"
}

mount_fs() { # THREADS
	"$E4INFOFS" "$W/m" "$W/f" -f -o "defrag_threads=$1" >>"$W/daemon.log" 2>&1 &
	PIDS+=($!)
	local i
	for i in $(seq 100); do findmnt -n "$W/f" >/dev/null && break; sleep 0.1; done
	findmnt -n "$W/f" >/dev/null || die "e4infofs did not mount: $(tail -n 5 "$W/daemon.log")"
	MOUNTS+=("$W/f")
}
umount_fs() {
	fusermount3 -u "$W/f" || die "unmount"
	wait "${PIDS[-1]}" || die "daemon exit status $?"
	unset 'PIDS[-1]' 'MOUNTS[-1]'
}

# ---- reader alone --------------------------------------------------------------
alone=()
for i in 1 2 3; do
	reader "$W/alone.$i"
	alone+=("$(awk '{ print $3 }' "$W/alone.$i")")
done
alone_med=$(printf '%s\n' "${alone[@]}" | sort -g | sed -n 2p)
log "reader alone: ${alone[*]} MiB/s (median $alone_med)"

# ---- the jobs --------------------------------------------------------------------
D=$W/f/corpus/defrag
for k in "${!THR[@]}"; do
	th=${THR[$k]} secs=${SECS[$k]}
	mount_fs "$th"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	( echo "1 seconds=$secs mibps=$MIBPS" >"$D" ) 2>"$W/job.$th.err" &
	job=$!
	t0=$EPOCHREALTIME
	: >"$W/samples.$th"
	rpid=""
	classes=""
	n=0
	while kill -0 "$job" 2>/dev/null; do
		cat "$D" >"$W/st" 2>/dev/null || true
		if [ "$(dkey "$W/st" state)" = running ]; then
			echo "$EPOCHREALTIME $(dkey "$W/st" bytes_done) $(awk '{ print $3, $7 }' "$STAT")" >>"$W/samples.$th"
			n=$((n + 1))
		fi
		if [ -z "$classes" ]; then
			classes=$(for task in /proc/"${PIDS[-1]}"/task/*; do
				[ "$(cat "$task/comm" 2>/dev/null)" = e4defrag ] && ionice -p "$(basename "$task")"
			done 2>/dev/null | sort -u | tr '\n' ' ') || true
		fi
		# With the first thread count: the reader 5 s into the job.
		if [ "$k" -eq 0 ] && [ -z "$rpid" ] && [ "$n" -ge 5 ]; then
			reader "$W/during" &
			rpid=$!
		fi
		# Every second, whatever the reads above took.
		ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", ((b - a) * 1000) % 1000 }')
		sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", (1000 - ms) / 1000 }')"
	done
	wall=$(secs_since "$t0")
	wait "$job" || die "the job failed: $(cat "$W/job.$th.err")"
	if [ -n "$rpid" ]; then wait "$rpid" || die "the reader failed"; fi
	cat "$D" >"$W/result.$th"
	state=$(dkey "$W/result.$th" state)
	moved=$(dkey "$W/result.$th" bytes_moved)
	jsecs=$(dkey "$W/result.$th" seconds)
	log "threads $th: state $state, $moved bytes moved in $jsecs s (wall $wall s), $(wc -l <"$W/samples.$th") samples; I/O class of the moving threads: $classes"
	echo "$th $state $moved $jsecs $classes" >"$W/job.$th"
	umount_fs
done
runs_after=$(runs "$W/m/corpus")
log "runs of the corpus: $runs_before -> $runs_after"
# The reader alone again, after the jobs: how much it varies by itself.
again=()
for i in 1 2 3; do
	reader "$W/again.$i"
	again+=("$(awk '{ print $3 }' "$W/again.$i")")
done
log "reader alone after the jobs: ${again[*]} MiB/s"

# ---- analysis and report ---------------------------------------------------------
during_line=$(cat "$W/during" 2>/dev/null || echo "0 0 0")
python3 - "$W" "$MIBPS" "$READER_MIB" "$alone_med" "$during_line" "${alone[*]}" "${again[*]}" "${THR[@]}" >"$W/analysis.md" <<'PY' || die "analysis"
import sys
w, cap, reader_mib, alone = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
r0, r1, during = (float(x) for x in sys.argv[5].split())
alone_runs, again_runs = sys.argv[6], sys.argv[7]
threads = sys.argv[8:]
MIB = 1048576.0
out = []
summary = []
for th in threads:
    allrows = [tuple(float(x) for x in l.split()) for l in open(f"{w}/samples.{th}") if len(l.split()) == 4]
    # Windows from the last sample before the first move (bytes_done 0:
    # before it the job maps the tree and plans, and moves nothing).
    first = next((k for k, r in enumerate(allrows) if r[1] > 0), len(allrows))
    rows = allrows[max(first - 1, 0):]
    lead = rows[0][0] - allrows[0][0] if rows else 0
    job = open(f"{w}/job.{th}").read().split()
    out.append(f"### defrag_threads={th}\n")
    out.append(f"Job: state {job[1]}, {int(job[2]) / MIB:.1f} MiB moved in {float(job[3]):.1f} s "
               f"({int(job[2]) / MIB / float(job[3]):.2f} MiB/s over the whole job, start and end included); "
               f"I/O class of the moving threads: {' '.join(job[4:]) or '?'}. "
               f"The windows start at the last sample before the first bytes moved, {lead:.1f} s after the first "
               f"sample of the running job (mapping and planning); a window ends at the first sample 5 s or "
               f"more after its start, and the last, partial window is left out.\n")
    out.append("| window (s from the first sample) | job bytes_done MiB/s | device read MiB/s | device written MiB/s | (read + written) / 2 MiB/s | reader running | job within 10% | device within 10% |")
    out.append("|---|---|---|---|---|---|---|---|")
    n = ok_job = ok_dev = 0
    lo_j = lo_d = float("inf")
    hi_j = hi_d = 0.0
    i = 0
    while True:
        # Consecutive windows: the first sample at least 5 s after the window's start.
        j = next((k for k in range(i + 1, len(rows)) if rows[k][0] - rows[i][0] >= 4.95), None)
        if j is None:
            break
        (t, b, sr, sw), (t2, b2, sr2, sw2) = rows[i], rows[j]
        secs = t2 - t
        rj = (b2 - b) / MIB / secs
        rr = (sr2 - sr) * 512 / MIB / secs
        rw = (sw2 - sw) * 512 / MIB / secs
        both = (rr + rw) / 2
        rdr = r1 > 0 and t < r1 and t2 > r0
        # While the reader runs, the device's reads are partly its: the
        # written sectors alone stand for the move then.
        dev = rw if rdr else both
        jin = abs(rj - cap) <= cap * 0.10
        din = abs(dev - cap) <= cap * 0.10
        n += 1
        ok_job += jin
        ok_dev += din
        lo_j, hi_j = min(lo_j, rj), max(hi_j, rj)
        lo_d, hi_d = min(lo_d, dev), max(hi_d, dev)
        out.append(f"| {t - rows[0][0]:.1f}-{t2 - rows[0][0]:.1f} | {rj:.2f} | {rr:.2f} | {rw:.2f} | {both:.2f} | "
                   f"{'yes' if rdr else 'no'} | {'yes' if jin else 'NO'} | {'yes' if din else 'NO'}{' (written)' if rdr else ''} |")
        i = j
    out.append("")
    summary.append((th, n, ok_job, ok_dev, lo_j, hi_j, lo_d, hi_d))
    print(f"threads {th}: {n} windows; job within 10%: {ok_job}/{n} ({lo_j:.2f}-{hi_j:.2f} MiB/s); "
          f"device within 10%: {ok_dev}/{n} ({lo_d:.2f}-{hi_d:.2f} MiB/s)", file=sys.stderr)
print("## Rate, every 5 s window\n")
print(f"| defrag_threads | windows | job's account within 10% of {cap:g} MiB/s | range | device within 10% | range | |")
print("|---|---|---|---|---|---|---|")
for th, n, oj, od, lj, hj, ld, hd in summary:
    verdict = "PASS" if n and oj == n and od == n else "MISS"
    rj = f"{lj:.2f}-{hj:.2f} MiB/s" if n else "–"
    rd = f"{ld:.2f}-{hd:.2f} MiB/s" if n else "–"
    print(f"| {th} | {n} | {oj} / {n} | {rj} | {od} / {n} | {rd} | {verdict} |")
print()
print("\n".join(out))
print("## Impact on a reader\n")
if during > 0:
    ratio = during / alone
    verdict = "PASS" if ratio >= 0.8 else "MISS"
    print(f"| reader alone (median of 3) | reader during the job | ratio | target | |")
    print("|---|---|---|---|---|")
    print(f"| {alone:.1f} MiB/s | {during:.1f} MiB/s | {ratio:.2f} | >= 0.80 | {verdict} |")
    print(f"\nReader alone before the jobs: {alone_runs} MiB/s; after them: {again_runs} MiB/s.")
    print(f"\nThe reader: `dd if=READER of=/dev/null bs=1M iflag=direct`, {reader_mib} MiB, caches dropped first; "
          f"during the job it ran {r1 - r0:.2f} s, from about 5 s into the first job "
          f"(the windows marked \"reader running\" above).")
    print(f"reader: alone {alone:.1f} MiB/s, during the job {during:.1f} MiB/s: ratio {ratio:.2f} ({verdict})", file=sys.stderr)
else:
    print("The reader did not run during the job (the job ended within 5 s).")
PY

elapsed=$(secs_since "$T_START")
{
	echo "# A throttled job on a live filesystem"
	echo
	echo "Produced by \`$INVOKED\` (from the repository root) at commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) on $(date -u +%Y-%m-%dT%H:%M:%SZ), in $(awk -v s="$elapsed" 'BEGIN { printf "%.1f min", s / 60 }'); kernel \`$(uname -r)\`, $(nproc) cores. Generated: do not edit by hand, run the command again."
	echo
	echo "Load average (1, 5, 15 min): $LOAD_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end."
	echo
	echo "## Setup"
	echo
	echo "- One ext4 image (4 KiB blocks, sparse file) on \`$(basename "$DEV")\` (\`losetup --direct-io=on\`), mounted \`noatime\`;"
	echo "  the corpus: $NFILES files of $FILE_MIB MiB ($((NFILES * FILE_MIB)) MiB) allocated interleaved in 512 KiB and 1 MiB"
	echo "  chunks (\`mkfrag frag\`), $runs_before runs before, $runs_after after both jobs; a reader file of $READER_MIB MiB"
	echo "  ($reader_runs runs) outside the job's directory."
	echo "- Per thread count (\`-o defrag_threads=T\`: a mount option, the trigger has no threads key), a fresh"
	echo "  mount and \`echo \"1 seconds=S mibps=$MIBPS\" > MNT/corpus/defrag\` with S = ${SECS[*]} s for T = ${THR[*]}"
	echo "  (each job moves what the one before left)."
	echo "- Sampled every second while the job runs: \`bytes_done\` of \`cat MNT/corpus/defrag\` (the job's"
	echo "  account: bytes moved so far, reported chunk by chunk, each moved byte counted once) and fields 3 and 7 of"
	echo "  \`/sys/block/$(basename "$DEV")/stat\` (sectors read and written: from outside)."
	echo "- What \"moved\" counts: a moved byte is read once from its old place and written once to its new one,"
	echo "  so the device sees about twice the job's bytes (plus the journal's and metadata writes). The device's"
	echo "  figure compared with $MIBPS MiB/s is (read + written) / 2, or the written sectors alone in the windows"
	echo "  where the reader also reads."
	echo "- Schedulers: \`$(basename "$DEV")\`: \`$sched_loop\`; backing disk \`$backing\`: \`$sched_back\`."
	echo "  The job's threads do their I/O in the idle class (\`-o defrag_idle_io=1\`, the default), but only"
	echo "  schedulers that know priorities act on it (bfq; mq-deadline serves the idle class after the others):"
	echo "  \`none\`, the scheduler of loop devices and of most NVMe and virtio disks, ignores it. The reader and"
	echo "  the job meet first at the loop device, whose scheduler is \`none\`: whatever the backing disk's"
	echo "  scheduler does, the idle class is not what keeps room for the reader here; the cap \`mibps=\` is."
	echo "- Caches: the loop device reads its image with direct I/O and the reader with O_DIRECT after"
	echo "  \`drop_caches\`, so neither goes through this kernel's page cache; but a virtual disk's reads may"
	echo "  come from the hypervisor's cache. A reader alone faster than the disk is not reading the disk,"
	echo "  and its ratio then says little about a disk's contention (see docs/defrag.md: the earlier"
	echo "  tests/bench/impact.sh was removed for this, commit a91bde4)."
	echo
	cat "$W/analysis.md"
} >"$OUT"
log "wrote $OUT in $elapsed s"
