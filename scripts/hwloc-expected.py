#!/usr/bin/env python3
"""Writes the expected answer for a recorded machine in tests/fixtures/topology: what
hwloc (Debian's lstopo) reports for the tree with only its Linux backend. Every machine
is one directory, NAME/, holding NAME.tar.bz2 (the recorded tree), NAME.expected.json
(hwloc's answer) and NAME.hwloc.xml (hwloc's XML export).

    scripts/hwloc-expected.py PATH/NAME.tar.bz2
    scripts/hwloc-expected.py --copy-shared ../shared/fixtures/topology

`--copy-shared DIR` copies the shared fixtures as they are, byte for byte: DIR's
`NAME.tar.bz2`, `NAME.expected.json` and `NAME.hwloc.xml` go to NAME/ here, and
COPYING.hwloc beside them (refresh the copies this way when the shared fixtures change;
the test `copies_match_the_shared_fixtures` fails when they drift).
`scripts/hwloc-expected.py NAME.tar.bz2` adds a machine: its tarball is copied to NAME/.

It unpacks the tarball into a temporary directory, runs
`HWLOC_COMPONENTS=linux,stop HWLOC_FSROOT=<root> lstopo-no-graphics --of xml -`
(kept as NAME.hwloc.xml) and `lstopo-no-graphics --cpukinds` (efficiency ranks, which
the XML does not carry), and extracts the fields described in the fixtures' README.md.
Identifiers are hwloc's gp_index values (unique in the file); compare partitions.
`cpu_kinds[].efficiency` is the XML's forced_efficiency where present, else the rank
`lstopo --cpukinds` prints (null where hwloc cannot rank, or for a single kind).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../tests/fixtures/topology")


def bitmap(text):
    """hwloc bitmap text `0x000000ff,0x00000001` to a sorted list of indexes."""
    if not text:
        return []
    infinite = text.startswith("0xf...f,")
    words = text.replace("0xf...f,", "").split(",")
    out = []
    for i, word in enumerate(reversed(words)):
        value = int(word, 16) if word else 0  # hwloc writes zero words as empty
        for bit in range(32):
            if value >> bit & 1:
                out.append(i * 32 + bit)
    if infinite:
        raise ValueError("infinite bitmap " + text)
    return out


def hwloc(root, args):
    env = dict(os.environ, HWLOC_COMPONENTS="linux,stop", HWLOC_FSROOT=root)
    return subprocess.run(["lstopo-no-graphics"] + args, env=env, check=True,
                          capture_output=True, text=True).stdout


def kinds(text):
    out = []
    for line in text.splitlines():
        m = re.match(r"CPU kind #\d+ (?:efficiency (-?\d+) )?cpuset (\S+)", line)
        if m:
            rank = m.group(1) if m.group(1) and int(m.group(1)) >= 0 else None
            out.append({"cpuset": bitmap(m.group(2)), "efficiency": rank, "infos": {}})
        elif out and "=" in line:
            k, v = line.strip().split(" = ", 1)
            out[-1]["infos"][k] = v
    return out


def walk(obj, ancestors, pus, numa, counts):
    kind = obj.get("type")
    counts[kind] = counts.get(kind, 0) + 1
    if kind == "NUMANode":
        numa.append((int(obj.get("os_index")), set(bitmap(obj.get("cpuset")))))
    if kind == "PU":
        rec = {"os": int(obj.get("os_index"))}
        for a in ancestors:
            name = {"Core": "core", "L2Cache": "l2", "L3Cache": "l3", "Package": "package",
                    "Die": "die", "Group": "group"}.get(a.get("type"))
            if name and name not in rec:
                rec[name] = a.get("gp_index")
                rec[name + "_cpuset"] = bitmap(a.get("cpuset"))
        pus.append(rec)
    for child in obj.findall("object"):
        walk(child, [obj] + ancestors if kind != "Machine" else ancestors, pus, numa, counts)


def main(tarball):
    name = os.path.basename(tarball)[: -len(".tar.bz2")]
    here = os.path.join(FIXTURES, name)
    os.makedirs(here, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball) as t:
            t.extractall(tmp, filter="tar")
        (root_dir,) = os.listdir(tmp)
        root = os.path.join(tmp, root_dir)
        xml = hwloc(root, ["--of", "xml", "-"])
        cpukinds = kinds(hwloc(root, ["--cpukinds"]))
    with open(os.path.join(here, name + ".hwloc.xml"), "w") as f:
        f.write(xml)
    top = ET.fromstring(xml)
    # hwloc's own rank where it makes one (several kinds); else the XML's
    # forced_efficiency (the Linux backend's cpu_capacity ranks), as the first
    # fixtures recorded it.
    forced = [k.get("forced_efficiency") for k in top.findall("cpukind")]
    for kind, f in zip(cpukinds, forced):
        if f is not None:
            kind["efficiency"] = f
        elif len(cpukinds) < 2:
            kind["efficiency"] = None
    machine = top.find("object")
    pus, numa, counts = [], [], {}
    walk(machine, [], pus, numa, counts)
    allowed = set(bitmap(machine.get("allowed_cpuset")))
    allowed_nodes = bitmap(machine.get("allowed_nodeset"))
    pus = sorted((p for p in pus if p["os"] in allowed), key=lambda p: p["os"])
    for p in pus:
        p["numa"] = sorted(n for n, cpus in numa if p["os"] in cpus and n in allowed_nodes)
        for k in [k for k in p if k.endswith("_cpuset")]:
            p[k] = [c for c in p[k] if c in allowed]
    distances = []
    for d in top.findall("distances2"):
        if d.get("type") != "NUMANode":
            continue
        idx = [int(v) for e in d.findall("indexes") for v in e.text.split()]
        vals = [int(v) for e in d.findall("u64values") for v in e.text.split()]
        n = len(idx)
        distances.append({"name": d.get("name", "NUMALatency"), "indexes": idx,
                          "matrix": [vals[i * n:(i + 1) * n] for i in range(n)]})
    out = {
        "fixture": name + ".tar.bz2",
        "root_dir": root_dir,
        "oracle": "hwloc 2.9.0 (Debian) lstopo, Linux backend only, with the recorded "
                  "tree as filesystem root (scripts/hwloc-expected.py)",
        "allowed_pus": sorted(allowed),
        "complete_pus": bitmap(machine.get("complete_cpuset")),
        "allowed_numa_nodes": allowed_nodes,
        "counts": dict(sorted(counts.items())),
        "pus": pus,
        "numa_distances": distances,
        "cpu_kinds": cpukinds,
    }
    with open(os.path.join(here, name + ".expected.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    copy = os.path.join(here, name + ".tar.bz2")
    if not os.path.exists(copy) or not os.path.samefile(tarball, copy):
        shutil.copyfile(tarball, copy)


def copy_shared(shared, here):
    """Copies a shared fixture directory's machines into one directory each (see the
    module doc), byte for byte."""
    for file in sorted(os.listdir(shared)):
        if file.endswith(".expected.json"):
            name = file[: -len(".expected.json")]
            os.makedirs(os.path.join(here, name), exist_ok=True)
            for suffix in (".tar.bz2", ".expected.json", ".hwloc.xml"):
                shutil.copyfile(os.path.join(shared, name + suffix),
                                os.path.join(here, name, name + suffix))
    shutil.copyfile(os.path.join(shared, "COPYING.hwloc"), os.path.join(here, "COPYING.hwloc"))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--copy-shared"]:
        copy_shared(sys.argv[2], FIXTURES)
    else:
        for arg in sys.argv[1:]:
            main(arg)
