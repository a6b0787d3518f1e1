"""Extra-P against scalescope's own models on the same curves.

Usage (through run.sh, which provides Extra-P): compare.py SCALESCOPE [--json]

For each published curve in crates/analysis/tests/published (machine and split
listed in CURVES below): scalescope imports the CSV and fits its models
(`analyze --json`: Amdahl, USL, piecewise at the machine's boundaries, one chosen
by AICc); Extra-P fits its performance-model normal form to the same points
(fit.py). Both are compared in speedup space (against the measured 1-thread
point): R^2 over all points, and the relative error of each when fitted only on
the points up to a split and asked to predict the points beyond it.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PUBLISHED = os.path.join(ROOT, "crates/analysis/tests/published")
# file, machine, extra import flags, last thread count of the fitting part
CURVES = [
    ("raytracer-origin2000.csv", "package:32 numa:1 core:2", [], 32),
    ("specsdm91-sparccenter2000.csv", "package:1 numa:1 core:16", ["--oversubscribe"], 72),
]


def amdahl(s, p):
    return 1.0 / (s + (1.0 - s) / p)


def usl(sigma, kappa, p):
    return p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))


def model_fn(m, p0):
    """Speedup at p of one of scalescope's fitted models (from the JSON)."""
    par = dict((k, v) for k, v in m["params"])
    if m["model"] == "amdahl":
        return lambda p: amdahl(par["s"], p)
    if m["model"] == "usl":
        return lambda p: usl(par["sigma"], par["kappa"], p)
    breaks = [(float(k.rsplit(" ", 1)[1]), v) for k, v in m["params"][1:]]
    return lambda p: 1.0 + par["slope"] * (p - p0) + sum(c * max(p - b, 0.0) for b, c in breaks)


def read_points(path, upto=None):
    with open(path) as f:
        rows = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    pts = [(int(r.split(",")[0]), float(r.split(",")[1])) for r in rows[1:]]
    return [p for p in pts if upto is None or p[0] <= upto]


def ours(scalescope, csv, machine, flags, upto, tmp):
    pts = read_points(csv, upto)
    cut = os.path.join(tmp, f"{os.path.basename(csv)}-{upto}.csv")
    with open(cut, "w") as f:
        f.write("threads,value\n" + "".join(f"{t},{v}\n" for t, v in pts))
    out = os.path.join(tmp, f"{os.path.basename(csv)}-{upto}")
    subprocess.run([scalescope, "import", cut, "--synthetic", machine, "--placement",
                    "cores-first", "--out", out, *flags], check=True, capture_output=True)
    a = json.loads(subprocess.run([scalescope, "analyze", os.path.join(out, "results.jsonl"),
                                   "--json"], check=True, capture_output=True).stdout)
    c = a["results"][0]["analysis"]["curves"][0]
    p0 = c["points"][0]["threads"]
    return c["models"], {m["model"]: (model_fn(m, p0), m) for m in c["models"]["candidates"]}


def extrap(csv, upto):
    args = [sys.executable, os.path.join(HERE, "fit.py"), csv]
    if upto is not None:
        args += ["--fit-upto", str(upto)]
    return json.loads(subprocess.run(args, check=True, capture_output=True).stdout)


def r2(pts, f):
    mean = sum(s for _, s in pts) / len(pts)
    tot = sum((s - mean) ** 2 for _, s in pts)
    res = sum((s - f(t)) ** 2 for t, s in pts)
    return 1.0 - res / tot if tot > 0 else 1.0


def compare(scalescope, name, machine, flags, split, tmp):
    csv = os.path.join(PUBLISHED, name)
    pts = read_points(csv)
    base = pts[0][1]
    sp = [(t, v / base) for t, v in pts]
    rows = []
    for upto in (None, split):
        choice, fns = ours(scalescope, csv, machine, flags, upto, tmp)
        ex = extrap(csv, upto)
        ex_fn = {p["threads"]: p["predicted"] / base for p in ex["predictions"]}
        models = [(k + (" (chosen)" if k == choice["chosen"] else "")
                   + (" (rejected: " + m["rejected"] + ")" if m["rejected"] else ""), f)
                  for k, (f, m) in fns.items()]
        models.append((f"Extra-P: {ex['model']}", lambda t, e=ex_fn: e[t]))
        fitted = [(t, s) for t, s in sp if upto is None or t <= upto]
        for label, f in models:
            rows.append({
                "curve": name,
                "fitted_upto": upto,
                "model": label,
                "r2_fitted": r2(fitted, f),
                "error_beyond": {t: f(t) / s - 1.0 for t, s in sp if upto is not None and t > upto},
            })
    return rows


def table(rows):
    lines = ["| curve | fitted on | model | R^2 on the fitted points | prediction error beyond |",
             "|---|---|---|---|---|"]
    for r in rows:
        ho = ", ".join(f"{t}: {err:+.1%}" for t, err in r["error_beyond"].items())
        upto = "all points" if r["fitted_upto"] is None else f"threads <= {r['fitted_upto']}"
        lines.append(f"| {r['curve']} | {upto} | {r['model']} | {r['r2_fitted']:.3f} | {ho} |")
    return "\n".join(lines)


def main():
    scalescope = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        results = [r for c in CURVES for r in compare(scalescope, *c, tmp)]
    import extrap as e
    if "--json" in sys.argv:
        print(json.dumps({"extrap_version": e.__version__, "rows": results}, default=str))
    else:
        print(f"Extra-P {e.__version__}; speedups against the measured 1-thread point")
        print(table(results))


if __name__ == "__main__":
    main()
