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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
