"""Leave-the-top-out: scalescope's mechanism model, the USL and Extra-P on the
same held-out points.

Usage (through run.sh, which provides Extra-P): predict.py EXPORT_DIR [--json]

EXPORT_DIR is what `PREDICT_EXPORT=DIR cargo test -p scalescope-analysis --test
predict` writes: DIR/generated/*.csv (the generated corpus, two placements each)
and DIR/published/*.csv (the published curves), rows `placement, threads, rep,
seconds, role, ours_seconds, usl_seconds`; `train` rows are the points with at
most half the largest thread count, `test` rows the rest, with the predictions
scalescope's model and the USL made from the train rows. Extra-P (its
performance-model normal form in p = threads, default modeler, as shipped and
with negative exponents allowed, which strong scaling needs) is fitted here to
the same train rows of each placement (every repetition) and evaluated at the
test thread counts. Each error is |predicted time / measured median time - 1|; the
table gives the median over the held-out points where all three predicted.
"""

import csv
import glob
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit import text_input  # noqa: E402


def read(path):
    curves = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            c = curves.setdefault(r["placement"], {"train": {}, "test": {}, "ours": {}, "usl": {}})
            t = int(r["threads"])
            c[r["role"]].setdefault(t, []).append(float(r["seconds"]))
            if r["role"] == "test":
                if r["ours_seconds"]:
                    c["ours"][t] = float(r["ours_seconds"])
                if r["usl_seconds"]:
                    c["usl"][t] = float(r["usl_seconds"])
    return curves


def extrap_model(train, negative):
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.modelers.model_generator import ModelGenerator

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "curve.txt")
        with open(path, "w") as f:
            f.write(text_input("seconds", dict(sorted(train.items()))))
        exp = TextFileReader().read_experiment(path)
    gen = ModelGenerator(exp)
    # Strong scaling makes time fall with p: its normal form needs negative
    # exponents, off by default (Extra-P targets growth with p).
    m = getattr(gen.modeler, "single_parameter_modeler", gen.modeler)
    m.allow_negative_exponents = negative
    gen.model_all()
    model = next(iter(gen.models.values()))
    return model.hypothesis.function


def errors(path):
    """(ours, usl, extrap default, extrap with negative exponents) error lists
    over the held-out points of one file."""
    out = ([], [], [], [])
    for c in read(path).values():
        fns = [extrap_model(c["train"], neg) for neg in (False, True)]
        for t, vs in sorted(c["test"].items()):
            if t not in c["ours"] or t not in c["usl"]:
                continue
            m = statistics.median(vs)
            ex = [float(fn.evaluate(float(t))) for fn in fns]
            for lst, pred in zip(out, (c["ours"][t], c["usl"][t], *ex)):
                lst.append(abs(pred / m - 1.0))
    return out


def main():
    root = sys.argv[1]
    import extrap
    sets = [("generated corpus", sorted(glob.glob(os.path.join(root, "generated", "*.csv"))))]
    sets += [(os.path.basename(p), [p]) for p in sorted(glob.glob(os.path.join(root, "published", "*.csv")))]
    rows = []
    for name, files in sets:
        if not files:
            continue
        errs = ([], [], [], [])
        for f in files:
            for acc, e in zip(errs, errors(f)):
                acc += e
        med = [statistics.median(e) for e in errs]
        rows.append({"set": name, "curves": len(files), "points": len(errs[0]),
                     "ours": med[0], "usl": med[1], "extrap": med[2], "extrap_negative": med[3]})
    if "--json" in sys.argv:
        print(json.dumps({"extrap_version": extrap.__version__, "rows": rows}))
        return
    print(f"Extra-P {extrap.__version__}; median |predicted time / measured - 1| on the held-out points")
    print("| set | files | held-out points | scalescope model | USL | Extra-P (default) | Extra-P (negative exponents) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['curves']} | {r['points']} | {r['ours']:.1%} | {r['usl']:.1%} "
              f"| {r['extrap']:.1%} | {r['extrap_negative']:.1%} |")


if __name__ == "__main__":
    main()
