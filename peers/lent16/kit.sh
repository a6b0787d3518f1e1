#!/usr/bin/env bash
# Builds the kit the lent 16-core machine needs (it has no compiler, cargo or
# registry): a stripped release scalescope, GAP's programs linked statically with
# GAP's own flags, GNU time (for peak RSS, peers/pairs.py) and the DuckDB wheels for
# its Python 3.12. Everything goes to .dev/ at the repository root, which must be
# ignored (`echo /.dev/ >> .git/info/exclude`) and is carried with `carry: [".dev"]`
# (under the 64 MiB a call may carry: about 54 MB). GAP is no registry's package:
#
#   PEER_SRC=/somewhere/gapbs peers/lent16/kit.sh
#
# Then, on the machine, from the repository root: `bash peers/lent16/run1.sh` and
# `bash peers/lent16/run2.sh` (each under 6 minutes; see their headers), with
# OUT set to the folder whose files come back.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${PEER_SRC:?set PEER_SRC to a gapbs source directory (git clone https://github.com/sbeamer/gapbs)}"
mkdir -p .dev/bin .dev/whl
cargo build --release --quiet
strip -o .dev/bin/scalescope target/release/scalescope
for k in bfs pr pr_spmv tc converter; do
  g++ -std=c++11 -O3 -Wall -fopenmp -static "$PEER_SRC/src/$k.cc" -o ".dev/bin/gap-$k" 2>/dev/null
  strip ".dev/bin/gap-$k"
done
cp /usr/bin/time .dev/bin/gnu-time
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .dev/whl \
  "$(grep '^duckdb==' peers/requirements.txt)" "$(grep '^duckdb-ext-tpch==' peers/requirements.txt)"
du -sh .dev
