#!/usr/bin/env bash
# Installs the Debian packages the test suite needs (hwloc's lstopo is the oracle for
# this machine's topology). Safe to run repeatedly; does nothing when all are present.
set -euo pipefail
need=()
command -v lstopo-no-graphics >/dev/null || need+=(hwloc)
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
