"""Fits Extra-P's performance model to a scalescope-import CSV and prints JSON.

Usage: fit.py CSV [--fit-upto T] [--predict T,T,...] [--modeler NAME]

The CSV is the one `scalescope import` reads: `threads`, then value columns (the
first one that is not `placement`, `mem` or `rep` is modelled), one row per run;
`#` lines are comments. Extra-P models the value as a function of p = threads
(its performance-model normal form, chosen by cross-validation). With
--fit-upto T only the points with threads <= T are given to Extra-P, and the
rest are predicted, to compare extrapolation with the measured values.
Prints {"extrap_version", "modeler", "metric", "fitted_points", "model",
"rss", "smape", "ar2", "predictions": [{"threads", "measured", "predicted"}]}.
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile


def read_curve(path):
    with open(path) as f:
        rows = [l for l in f if l.strip() and not l.startswith("#")]
    reader = csv.DictReader(rows)
    skip = {"threads", "placement", "mem", "rep"}
    metric = next(c for c in reader.fieldnames if c.strip() not in skip)
    points = {}
    for r in reader:
        points.setdefault(int(r["threads"]), []).append(float(r[metric]))
    return metric, dict(sorted(points.items()))


def text_input(metric, points):
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {t} )" for t in points),
             "REGION curve", f"METRIC {metric}"]
    lines += ["DATA " + " ".join(repr(v) for v in vs) for vs in points.values()]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--fit-upto", type=int)
    ap.add_argument("--predict", default="")
    ap.add_argument("--modeler", default="default")
    a = ap.parse_args()
    import extrap
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.modelers.model_generator import ModelGenerator

    metric, points = read_curve(a.csv)
    fit = {t: v for t, v in points.items() if a.fit_upto is None or t <= a.fit_upto}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "curve.txt")
        with open(path, "w") as f:
            f.write(text_input(metric, fit))
        exp = TextFileReader().read_experiment(path)
    gen = ModelGenerator(exp, modeler=a.modeler)
    gen.model_all()
    model = next(iter(gen.models.values()))
    fn = model.hypothesis.function
    extra = [int(x) for x in a.predict.split(",") if x.strip()]
    preds = []
    for t in sorted(set(points) | set(extra)):
        vs = points.get(t)
        preds.append({
            "threads": t,
            "measured": statistics.median(vs) if vs else None,
            "predicted": float(fn.evaluate(float(t))),
            "fitted": t in fit,
        })
    h = model.hypothesis
    num = lambda x: None if x is None or not math.isfinite(x) else float(x)
    print(json.dumps({
        "extrap_version": getattr(extrap, "__version__", "unknown"),
        "modeler": a.modeler,
        "metric": metric,
        "fitted_points": sorted(fit),
        "model": fn.to_string("p"),
        "rss": num(getattr(h, "RSS", None)),
        "smape": num(getattr(h, "SMAPE", None)),
        "ar2": num(getattr(h, "AR2", None)),
        "predictions": preds,
    }))


if __name__ == "__main__":
    sys.exit(main())
