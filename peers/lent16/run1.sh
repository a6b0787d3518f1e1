#!/usr/bin/env bash
# Device call 1: smoke, the machine's record, BFS against GAP to 16 threads, sweeps for the corpus.
. "$(dirname "$0")/common.sh"
chmod +x .dev/bin/* 2>/dev/null
log "host: $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$S" --version; "$GNU_TIME" -f %M true && echo "gnu time ok"
# The machine's record, as hwloc's gatherer would keep it (files only, no links followed).
rec=/tmp/rec; rm -rf $rec; mkdir -p $rec
for d in /sys/devices/system/cpu /sys/devices/system/node /sys/kernel/mm/transparent_hugepage; do
  find "$d" -type f -readable -not -path '*/cpuidle/*' -not -path '*/power/*' -not -name uevent 2>/dev/null | while read -r f; do
    mkdir -p "$rec$(dirname "$f")"; cat "$f" > "$rec$f" 2>/dev/null || rm -f "$rec$f"; done
done
mkdir -p $rec/proc/self; cp /proc/cpuinfo /proc/meminfo $rec/proc/; cp /proc/self/status /proc/self/cgroup $rec/proc/self/ 2>/dev/null
for f in /sys/fs/cgroup/cpuset.cpus.effective /sys/fs/cgroup/cpuset.mems.effective; do [ -r $f ] && mkdir -p $rec/sys/fs/cgroup && cat $f > $rec$f; done
lscpu > $rec/lscpu.txt; (cd $rec && tar czf "$OUT/sysfs.tgz" .)
"$S" topo --sysfs-root $rec > "$OUT/topo-recorded.txt" 2>&1; "$S" topo > "$OUT/topo-live.txt" 2>&1
diff -q "$OUT/topo-recorded.txt" "$OUT/topo-live.txt" && log "topo from the record equals topo live"
head -30 "$OUT/topo-live.txt"
mkdir -p "$OUT/sweeps"
if [ -n "${SMALL:-}" ]; then G=12 TH="1 2" TL=1..2; else G=20 TH="1 2 4 8 16" TL=1..16; fi
THREADS="$TH" GAP_ROWS=bfs TIMINGS=warm TRIALS=16 SCALESCOPE=$S PEER_BIN=$K section "gap bfs kron:$G" 120 peers/bench-gap.sh $G ${PAIRS:-5}
# A BFS of milliseconds: each run's median warm trial of 5 (sweep --trials, since 2026-11-28).
sweep bfs-kron$G $TL --workload graph --param graph=kron:$G --param kernel=bfs --trials ${TRIALS:-5}
sweep tpch-q1-sf1 $TL --workload tpch --param query=q1 --param sf=${SF:-1}
sweep is-b $TL --workload is --param class=${CLASS:-B}
sweep triangle-kron18 $TL --workload graph --param graph=kron:${G18:-18} --param pattern=triangle
sweep stream-512m ${STL:-1,2,3,4,6,8,10,12,14,16} --workload stream --param size=${SSIZE:-512MiB}
log "done"
