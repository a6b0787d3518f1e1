# Helpers for the lab's guest scripts (sourced). Each section goes to the serial
# console between `@@LAB-BEGIN name@@` and `@@LAB-END name rc=N@@`.

# section NAME CMD...: runs CMD, prints its stdout as section NAME, stderr after it as
# NAME.err (so a failure shows its message in the test's report). The output stays
# in /tmp/last.out until the next section.
section() {
  name=$1
  shift
  "$@" >/tmp/out.$$ 2>/tmp/err.$$
  rc=$?
  echo "@@LAB-BEGIN $name@@"
  cat /tmp/out.$$
  echo "@@LAB-END $name rc=$rc up=$(cut -d' ' -f1 /proc/uptime)@@"
  if [ -s /tmp/err.$$ ]; then
    echo "@@LAB-BEGIN $name.err@@"
    tail -n 20 /tmp/err.$$
    echo "@@LAB-END $name.err rc=0@@"
  fi
  mv /tmp/out.$$ /tmp/last.out
  rm -f /tmp/err.$$
  return $rc
}

# The kernel's view of the CPUs: one line per CPU, `cpu N online P package C core S siblings L node K`.
kernel_cpus() {
  for d in /sys/devices/system/cpu/cpu[0-9]*; do
    n=${d##*cpu}
    online=1
    [ -f "$d/online" ] && online=$(cat "$d/online")
    if [ -d "$d/topology" ] && [ "$online" = 1 ]; then
      pkg=$(cat "$d/topology/physical_package_id")
      core=$(cat "$d/topology/core_id")
      sib=$(cat "$d/topology/thread_siblings_list")
    else
      pkg=- core=- sib=-
    fi
    node=-
    for l in "$d"/node[0-9]*; do [ -e "$l" ] && node=${l##*/node}; done
    echo "cpu $n online $online package $pkg core $core siblings $sib node $node"
  done
}

# The kernel's view of the nodes: `node N cpus LIST memkb KB distance D0 D1 ...`.
kernel_nodes() {
  for d in /sys/devices/system/node/node[0-9]*; do
    n=${d##*node}
    mem=$(awk '/MemTotal/ {print $4}' "$d/meminfo")
    cpus=$(cat "$d/cpulist")
    echo "node $n cpus ${cpus:--} memkb $mem distance $(cat "$d/distance")"
  done
}

# Pages allocated on each node so far: `N hit+miss+...` from numastat (monotonic).
# numa_hit counts every allocation that landed on the node as intended, numa_miss every
# one that landed there though intended elsewhere: their sum is what the node served.
numastat_pages() {
  for d in /sys/devices/system/node/node[0-9]*; do
    n=${d##*node}
    awk -v n="$n" '/^numa_hit/ {h=$2} /^numa_miss/ {m=$2} END {printf "%s %d\n", n, h+m}' "$d/numastat"
  done
}

# Busy time per CPU so far (user+system jiffies, from /proc/stat): `N ticks`.
cpu_ticks() {
  awk '/^cpu[0-9]/ {sub("cpu", "", $1); print $1, $2 + $3 + $4}' /proc/stat
}

# measured NAME CMD...: section NAME with the kernel's counters before and after:
# NAME.before/NAME.after hold numastat pages and CPU ticks.
measured() {
  name=$1
  shift
  { numastat_pages | sed 's/^/pages /'; cpu_ticks | sed 's/^/ticks /'; } >/tmp/before.$$
  section "$name" "$@"
  rc=$?
  echo "@@LAB-BEGIN $name.kernel@@"
  sed 's/^/before /' /tmp/before.$$
  numastat_pages | sed 's/^/after pages /'
  cpu_ticks | sed 's/^/after ticks /'
  echo "@@LAB-END $name.kernel rc=0@@"
  rm -f /tmp/before.$$
  return $rc
}

kernel_state() {
  section kernel.cpus kernel_cpus
  section kernel.nodes kernel_nodes
}


# 0-3,8 -> 0 1 2 3 8
expand() {
  echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do [ -n "$a" ] && seq "$a" "${b:-$a}"; done | tr '\n' ' '
}
