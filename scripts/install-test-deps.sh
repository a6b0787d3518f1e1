#!/usr/bin/env bash
# Installs the Debian packages the test suite needs (hwloc's lstopo is the oracle for
# this machine's topology). Safe to run repeatedly; does nothing when all are present.
set -euo pipefail
need=()
command -v lstopo-no-graphics >/dev/null || need+=(hwloc)
# The sweep tests build a small OpenMP program and use taskset and pgrep.
command -v gcc >/dev/null || need+=(gcc libgomp1)
command -v taskset >/dev/null || need+=(util-linux)
command -v pgrep >/dev/null || need+=(procps)
# The report test looks at the HTML report in headless Chromium, as a person would.
command -v chromium >/dev/null || need+=(chromium)
# The lab (tests/lab.rs) boots emulated multi-socket SMT machines: QEMU, a static
# busybox for the guest's userland and cpio for its initramfs. The guest kernel is
# fetched by scripts/lab-image.sh with `apt-get download`, never installed on the host.
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx poweroff \
  && ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
# The MPI tests (tests/mpi.rs) launch real ranks through Open MPI's and MPICH's own
# launchers, called by explicit path because both provide `mpirun` alternatives, and
# through srun on a one-node Slurm on loopback (slurmctld + slurmd + munged, started and
# stopped by scripts/mpi-slurm.sh). The MPI NAS binary (crates/mpi-nas) is built on the
# `mpi` crate, whose bindgen needs libclang and the Open MPI headers.
command -v mpirun.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
command -v mpiexec.hydra >/dev/null || need+=(mpich)
command -v slurmd >/dev/null && command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
# The multi-node cluster (scripts/slurm-cluster.sh, tests/mpi_cluster.rs): one network
# namespace per node on a bridge (ip), each node's hostname and TmpFS in namespaces of
# its own (unshare, nsenter).
command -v ip >/dev/null || need+=(iproute2)
command -v nsenter >/dev/null && command -v unshare >/dev/null || need+=(util-linux)
[ -e /usr/lib/llvm-14/lib/libclang.so ] || ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 \
  || need+=(libclang-dev)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "installing test dependencies: ${need[*]}" >&2
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -o DPkg::Lock::Timeout=600 -y -qq "${need[@]}" >/dev/null
