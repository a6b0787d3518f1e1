#!/usr/bin/env bash
# Builds the lab's guest image: Debian's kernel (fetched once with `apt-get download`
# of the exact package `linux-image-amd64` depends on, unpacked with `dpkg -x`, never
# installed on the host) and an initramfs of busybox-static, the scalescope binary
# (stripped), its shared libraries and the guest scripts of tests/lab/guest.
#
# Usage: scripts/lab-image.sh BINARY OUTDIR
#   BINARY  the scalescope binary to put in the guest (the lab passes the one its own
#           test build made, `CARGO_BIN_EXE_scalescope`: the dev profile, whose
#           kernels and what they call are optimised, see Cargo.toml)
#   OUTDIR  where to write vmlinuz and initrd.gz (target/lab); the kernel package is
#           cached in OUTDIR/kernel and fetched again only when Debian's version moves.
# Prints the two paths, one per line, on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/lab-image.sh BINARY OUTDIR}
out=${2:?usage: scripts/lab-image.sh BINARY OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---- the kernel: the exact version linux-image-amd64 depends on (no wildcard, which
# would download every version).
kernel_dir=$out/kernel
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9].*-amd64$/ {print $2; exit}'
}
pkg=$(kernel_package || true)
if [ -z "$pkg" ] && [ ! -d "$kernel_dir" ] && [ "$(id -u)" -eq 0 ]; then
  # Package lists cleaned away (container images do): fetch them once.
  apt-get update -qq >/dev/null 2>&1 || true
  pkg=$(kernel_package || true)
fi
if [ -z "$pkg" ] && [ -d "$kernel_dir" ]; then
  # Offline, with a kernel fetched before: use it.
  pkg=$(ls "$kernel_dir" | grep '^linux-image-' | head -1 || true)
fi
if [ -z "$pkg" ]; then
  echo "lab-image: apt-cache names no linux-image-<version>-amd64 for linux-image-amd64" >&2
  echo "lab-image: (run apt-get update, or scripts/install-test-deps.sh)" >&2
  exit 2
fi
if [ ! -f "$kernel_dir/$pkg/vmlinuz" ]; then
  echo "lab-image: fetching $pkg (once; cached in $kernel_dir)" >&2
  rm -rf "$kernel_dir"
  mkdir -p "$kernel_dir/download" "$kernel_dir/$pkg"
  (cd "$kernel_dir/download" && apt-get download -qq -o APT::Sandbox::User=root "$pkg")
  deb=$(ls "$kernel_dir"/download/"$pkg"_*.deb)
  dpkg -x "$deb" "$kernel_dir/unpacked"
  cp "$kernel_dir"/unpacked/boot/vmlinuz-* "$kernel_dir/$pkg/vmlinuz.tmp"
  mv "$kernel_dir/$pkg/vmlinuz.tmp" "$kernel_dir/$pkg/vmlinuz"
  # Only the kernel is needed: the guest runs from the initramfs, no modules.
  rm -rf "$kernel_dir/unpacked" "$kernel_dir/download"
fi
cp "$kernel_dir/$pkg/vmlinuz" "$out/vmlinuz"

# ---- the initramfs, rebuilt every time (about a second): the binary changes often.
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || busybox=/bin/busybox
if ! { LC_ALL=C ldd "$busybox" 2>&1 || true; } | grep -q 'not a dynamic'; then
  echo "lab-image: $busybox is not a static busybox (install busybox-static)" >&2
  exit 2
fi
root=$(mktemp -d "$out/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,lab,lib64,lib/x86_64-linux-gnu}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
strip -o "$root/bin/scalescope" "$bin" 2>/dev/null || cp "$bin" "$root/bin/scalescope"
# The shared libraries ldd lists, at the paths the loader looks for them.
ldd "$bin" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# The OpenMP probe of the studies, built here (the guest has no compiler), with its
# libraries (libgomp) where ldd finds them.
if command -v cc >/dev/null 2>&1 &&
  cc -O2 -fopenmp -o "$root/lab/omp-probe" crates/study/studies/omp-probe.c 2>/dev/null; then
  ldd "$root/lab/omp-probe" | awk '/=> \// {print $3}' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
  done
else
  echo "lab-image: no cc with -fopenmp: the runtime-placement check is left out" >&2
fi
cp tests/lab/guest/*.sh "$root/lab/"
cp tests/lab/guest/init "$root/init"
chmod +x "$root/init" "$root"/lab/*.sh
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz.tmp"
mv "$out/initrd.gz.tmp" "$out/initrd.gz"
echo "$out/vmlinuz"
echo "$out/initrd.gz"
