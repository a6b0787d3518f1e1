#!/usr/bin/env bash
# Extra-P (PyPI `extrap`, pinned) against scalescope's models on the published
# curves of crates/analysis/tests/published. Creates a virtual environment in a
# scratch directory (not in the repository), installs Extra-P there, builds
# scalescope and prints a comparison table (docs/ANALYSIS.md quotes it).
# Usage: peers/extrap/run.sh [--json]          compare on the published curves
#        peers/extrap/run.sh fit CSV [fit.py options]   Extra-P's model of one CSV as JSON
#        peers/extrap/run.sh predict [--json]   leave-the-top-out: scalescope's mechanism
#            model, the USL and Extra-P on the same held-out points of the generated
#            corpus and the published curves (predict.py; docs/ANALYSIS.md quotes it)
# Environment: SCALESCOPE_EXTRAP_VENV (default ${TMPDIR:-/tmp}/scalescope-extrap-venv).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
version=4.2.5
venv="${SCALESCOPE_EXTRAP_VENV:-${TMPDIR:-/tmp}/scalescope-extrap-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import extrap, sys; sys.exit(extrap.__version__ != '$version')" 2>/dev/null; then
  "$venv/bin/pip" install -q "extrap==$version" >&2
fi
if [ "${1:-}" = predict ]; then
  shift
  export_dir="$(mktemp -d "${TMPDIR:-/tmp}/scalescope-predict-XXXXXX")"
  trap 'rm -rf "$export_dir"' EXIT
  PREDICT_EXPORT="$export_dir" cargo test --quiet -p scalescope-analysis --test analysis predict::leave_the_top_out >&2
  "$venv/bin/python" "$here/predict.py" "$export_dir" "$@"
  exit
fi
if [ "${1:-}" = fit ]; then
  shift
  exec "$venv/bin/python" "$here/fit.py" "$@"
fi
cargo build --release --quiet
exec "$venv/bin/python" "$here/compare.py" target/release/scalescope "$@"
