# The lab's script for every shape. What to run comes from the kernel command line
# (see tests/lab/shapes.rs): LAB_THREADS threads for the placement sweeps, LAB_NODES
# the nodes to run every memory policy on (default all), LAB_OFFLINE
# a CPU to take offline first, LAB_CPUSET a cgroup v2 cpuset to run inside, LAB_MATRIX
# and LAB_TPCH to run `mem matrix` and TPC-H. Every scalescope command's output is
# paired with the kernel's own counters (see lib.sh); the test compares them.
. /lab/lib.sh

if [ -n "$LAB_OFFLINE" ]; then
  section offline sh -c "echo 0 > /sys/devices/system/cpu/cpu$LAB_OFFLINE/online"
fi
if [ -n "$LAB_CPUSET" ]; then
  section cgroup sh -c "mkdir -p /sys/fs/cgroup/lab &&
    echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control &&
    echo $LAB_CPUSET > /sys/fs/cgroup/lab/cpuset.cpus &&
    echo $$ > /sys/fs/cgroup/lab/cgroup.procs &&
    cat /sys/fs/cgroup/lab/cpuset.cpus.effective"
fi
kernel_state
section self grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status
section topo scalescope topo --json

# Placement: for every strategy the plan, then NAS EP pinned by that plan in this
# process (no other busy process: the kernel's per-CPU busy time around it must show
# exactly the planned CPUs), and for smt-pairs and cores-first the same through a sweep
# (its child pins itself before exec; the sweep's parent samples /proc meanwhile).
for s in compact scatter cores-first smt-pairs spread; do
  section "place.$s" scalescope place --strategy "$s" --threads "$LAB_THREADS" --json
  measured "ep.$s" scalescope npb ep --class S --threads "$LAB_THREADS" --placement "$s" --json
done
for s in smt-pairs cores-first; do
  measured "sweep.$s" scalescope sweep --workload ep --param class=S \
    --threads "$LAB_THREADS" --placement "$s" --reps 1 --warmup 0 --quiet --out "/tmp/sweep.$s"
  section "sweep.$s.results" cat "/tmp/sweep.$s/results.jsonl"
done

# Memory policies: one STREAM per policy and node, with numastat around it. The worker
# runs on the first allowed CPU unless the policy is first-touch from a node's CPU.
first_cpu=$(grep Cpus_allowed_list /proc/self/status | sed 's/.*\t//; s/[-,].*//')
stream() {
  measured "$1" scalescope mem stream --threads 1 --placement "cpus=$2" --mem "$3" \
    --size "${LAB_STREAM_SIZE:-16MiB}" --ntimes 2 --sustain 0 --json
}
for d in /sys/devices/system/node/node[0-9]*; do
  n=${d##*node}
  # LAB_NODES (comma-separated) limits the policy runs to those nodes.
  case ",${LAB_NODES:-$n}," in *",$n,"*) ;; *) continue ;; esac
  stream "mem.bind:$n" "$first_cpu" "bind:$n"
  stream "mem.preferred:$n" "$first_cpu" "preferred:$n"
  # First-touch from the node's first CPU this script may run on, if it has one.
  mine=" $(expand "$(grep Cpus_allowed_list /proc/self/status | sed 's/.*:[[:space:]]*//')") "
  for c in $(expand "$(cat "$d/cpulist")"); do
    case "$mine" in *" $c "*) stream "mem.first-touch:$n" "$c" first-touch; break ;; esac
  done
done
stream mem.interleave "$first_cpu" interleave
# The same policy set by the sweep before exec (not by the in-process pool).
last=$(ls -d /sys/devices/system/node/node[0-9]* | sed 's/.*node//' | sort -n | tail -1)
measured "sweep-mem.bind:$last" scalescope sweep --workload stream --param size=16MiB \
  --param ntimes=2 --threads 1 --placement "cpus=$first_cpu" --mem "bind:$last" \
  --reps 1 --warmup 0 --quiet --out /tmp/sweep-mem
section "sweep-mem.bind:$last.results" cat /tmp/sweep-mem/results.jsonl

if [ -n "$LAB_TPCH" ]; then
  section place.tpch scalescope place --strategy scatter --threads "$LAB_TPCH" --json
  measured tpch.numa scalescope tpch q6 --sf 0.01 --layout numa --threads "$LAB_TPCH" \
    --placement scatter --repeat 1 --json
fi
if [ -n "$LAB_MATRIX" ]; then
  measured matrix scalescope mem matrix --size 2MiB --latency-size 256KiB --passes 2 \
    --threads-per-node 1 --json
fi
if [ -n "$LAB_STUDIES" ]; then
  # The studies plan from this machine (two packages, SMT) and the budget, sized by
  # probes timed here, under emulation.
  section study.graph-mining scalescope study graph-mining --budget 2m --out /tmp/study-graph
  section study.graph-mining.plan cat /tmp/study-graph/study.json
  section study.graph-mining.report cat /tmp/study-graph/report.json
  section study.numa-structure scalescope study numa-structure --out /tmp/study-numa
  section study.numa-structure.report cat /tmp/study-numa/report.json
  # The OpenMP probe (built on the host by lab-image.sh) placed by its own runtime.
  if [ -x /lab/omp-probe ]; then
    section runtime scalescope sweep --placement runtime:compact,runtime:scatter,runtime:spread \
      --threads 2,4,8 --reps 1 --warmup 0 --quiet --out /tmp/runtime -- /lab/omp-probe 1000
    section runtime.results cat /tmp/runtime/results.jsonl
  fi
fi
exit 0
