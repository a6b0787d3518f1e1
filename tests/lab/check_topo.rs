//! `topo --json` inside the guest against the shape QEMU was given and the kernel's
//! sysfs as busybox read it.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::console::{kernel_cpus, kernel_nodes, Console, KernelCpu};
use crate::report::Check;
use crate::shapes::Shape;

type Groups = BTreeSet<Vec<u32>>;

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_u64().map(|x| x as u32))
                .collect()
        })
        .unwrap_or_default()
}

/// The `cpus` of every object in `topo[key]`, online CPUs only.
fn topo_groups(topo: &Value, key: &str, online: &BTreeSet<u32>) -> Groups {
    topo[key]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            u32s(&o["cpus"])
                .into_iter()
                .filter(|c| online.contains(c))
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// Groups of online CPUs by a key computed per CPU.
fn group_by(cpus: &BTreeSet<u32>, key: impl Fn(u32) -> Option<(u32, u32)>) -> Groups {
    let mut map = std::collections::BTreeMap::<(u32, u32), Vec<u32>>::new();
    for &c in cpus {
        if let Some(k) = key(c) {
            map.entry(k).or_default().push(c);
        }
    }
    map.into_values().collect()
}

fn same(what: &str, topo: &Groups, qemu: &Groups, kernel: &Groups) -> Result<String, String> {
    if topo == qemu && topo == kernel {
        Ok(format!("{} {what}: {:?}", topo.len(), topo))
    } else {
        Err(format!(
            "{what}: topo {topo:?}, QEMU {qemu:?}, kernel {kernel:?}"
        ))
    }
}

fn kcpu(kernel: &[KernelCpu], c: u32) -> Option<&KernelCpu> {
    kernel.iter().find(|k| k.cpu == c)
}

/// Every topology check for one shape.
pub fn checks(shape: &Shape, console: &Console) -> Vec<Check> {
    let topo = match console.json("topo") {
        Ok(t) => t,
        Err(e) => return vec![Check::new("topo --json", Err(e))],
    };
    let kernel = match kernel_cpus(console) {
        Ok(k) => k,
        Err(e) => return vec![Check::new("kernel CPUs", Err(e))],
    };
    let online: BTreeSet<u32> = kernel.iter().filter(|k| k.online).map(|k| k.cpu).collect();
    let per = shape.cpus_per_socket();
    let mut out = vec![Check::new(
        "CPUs online (kernel) as QEMU gave them",
        online_matches(shape, &online, &kernel),
    )];
    let packages = same(
        "packages",
        &topo_groups(&topo, "packages", &online),
        &group_by(&online, |c| Some((c / per, 0))),
        &group_by(&online, |c| kcpu(&kernel, c)?.package.map(|p| (p, 0))),
    );
    out.push(Check::new(
        "topo packages = QEMU sockets = kernel packages",
        packages,
    ));
    let cores = same(
        "cores",
        &topo_groups(&topo, "cores", &online),
        &group_by(&online, |c| Some((c / per, (c % per) / shape.threads))),
        &group_by(&online, |c| {
            let k = kcpu(&kernel, c)?;
            Some((k.package?, k.core?))
        }),
    );
    out.push(Check::new(
        "topo cores (SMT siblings) = QEMU = kernel",
        cores,
    ));
    out.push(Check::new(
        "topo per-PU flags = kernel",
        pu_flags(&topo, console, &kernel),
    ));
    out.push(Check::new(
        "topo NUMA nodes = QEMU = kernel",
        nodes(shape, &topo, console),
    ));
    out.push(Check::new(
        "topo SLIT = QEMU's = kernel's",
        slit(shape, &topo, console),
    ));
    if !shape.memory_only.is_empty() {
        out.push(Check::new(
            "memory-only node's locality = nearest CPUs by SLIT",
            locality(shape, &topo),
        ));
    }
    out.push(Check::new(
        "topo says the machine is virtual",
        hypervisor(&topo),
    ));
    out
}

fn online_matches(
    shape: &Shape,
    online: &BTreeSet<u32>,
    kernel: &[KernelCpu],
) -> Result<String, String> {
    let expected: BTreeSet<u32> = (0..shape.cpus())
        .filter(|c| Some(*c) != shape.offline)
        .collect();
    if kernel.len() as u32 != shape.cpus() || *online != expected {
        return Err(format!(
            "kernel lists {} CPUs, online {online:?}; QEMU gave {} with {:?} taken offline",
            kernel.len(),
            shape.cpus(),
            shape.offline
        ));
    }
    Ok(format!("{} of {} online", online.len(), shape.cpus()))
}

fn pu_flags(topo: &Value, console: &Console, kernel: &[KernelCpu]) -> Result<String, String> {
    let allowed = console
        .get("self")?
        .text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(crate::console::cpulist)
        .ok_or("no Cpus_allowed_list in /proc/self/status")?;
    let pus = topo["pus"].as_array().ok_or("topo has no pus")?;
    if pus.len() != kernel.len() {
        return Err(format!(
            "topo lists {} PUs, the kernel {}",
            pus.len(),
            kernel.len()
        ));
    }
    for k in kernel {
        let pu = pus
            .iter()
            .find(|p| p["cpu"] == k.cpu)
            .ok_or(format!("topo has no PU {}", k.cpu))?;
        let want_allowed = k.online && allowed.contains(&k.cpu);
        let node = pu["numa_node"].as_u64().map(|n| n as u32);
        if pu["online"] != k.online || pu["allowed"] != want_allowed || (k.online && node != k.node)
        {
            return Err(format!(
                "CPU {}: topo online={} allowed={} node={:?}; kernel online={} allowed={} node={:?}",
                k.cpu, pu["online"], pu["allowed"], node, k.online, want_allowed, k.node
            ));
        }
    }
    Ok(format!(
        "online, allowed ({allowed:?}) and node of {} PUs",
        pus.len()
    ))
}

fn nodes(shape: &Shape, topo: &Value, console: &Console) -> Result<String, String> {
    let knodes = kernel_nodes(console)?;
    let tnodes = topo["numa_nodes"]
        .as_array()
        .ok_or("topo has no numa_nodes")?;
    if knodes.len() as u32 != shape.nodes() || tnodes.len() != knodes.len() {
        return Err(format!(
            "QEMU {} nodes, kernel {}, topo {}",
            shape.nodes(),
            knodes.len(),
            tnodes.len()
        ));
    }
    for k in &knodes {
        let t = tnodes
            .iter()
            .find(|t| t["id"] == k.node)
            .ok_or(format!("topo has no node {}", k.node))?;
        let per = shape.cpus_per_socket();
        let qemu: Vec<u32> = if k.node < shape.sockets {
            (k.node * per..(k.node + 1) * per)
                .filter(|c| Some(*c) != shape.offline)
                .collect()
        } else {
            Vec::new()
        };
        let tcpus = u32s(&t["cpus"]);
        let mem = t["memory_bytes"].as_u64();
        if tcpus != k.cpus || k.cpus != qemu || mem != Some(k.mem_kb * 1024) {
            return Err(format!(
                "node {}: topo cpus {tcpus:?} memory {mem:?}; kernel cpus {:?} memory {} KiB; QEMU cpus {qemu:?}",
                k.node, k.cpus, k.mem_kb
            ));
        }
    }
    Ok(format!(
        "{} nodes, CPUs and memory as the kernel lists them",
        knodes.len()
    ))
}

fn slit(shape: &Shape, topo: &Value, console: &Console) -> Result<String, String> {
    let knodes = kernel_nodes(console)?;
    let tnodes = topo["numa_nodes"]
        .as_array()
        .ok_or("topo has no numa_nodes")?;
    let mut values = BTreeSet::new();
    for (i, k) in knodes.iter().enumerate() {
        let qemu: Vec<u32> = (0..shape.nodes())
            .map(|j| shape.distance(i as u32, j))
            .collect();
        let t = tnodes
            .iter()
            .find(|t| t["id"] == k.node)
            .map(|t| u32s(&t["distances"]));
        if t.as_ref() != Some(&k.distances) || k.distances != qemu {
            return Err(format!(
                "row {i}: topo {t:?}, kernel {:?}, QEMU {qemu:?}",
                k.distances
            ));
        }
        values.extend(qemu);
    }
    Ok(format!(
        "{}x{} table, values {values:?}",
        knodes.len(),
        knodes.len()
    ))
}

fn locality(shape: &Shape, topo: &Value) -> Result<String, String> {
    let tnodes = topo["numa_nodes"]
        .as_array()
        .ok_or("topo has no numa_nodes")?;
    let mut out = Vec::new();
    for (k, row) in shape.memory_only.iter().enumerate() {
        let id = shape.sockets + k as u32;
        let nearest = (0..shape.sockets)
            .min_by_key(|s| row[*s as usize])
            .unwrap_or(0);
        let per = shape.cpus_per_socket();
        let want: Vec<u32> = (nearest * per..(nearest + 1) * per).collect();
        let t = tnodes
            .iter()
            .find(|t| t["id"] == id)
            .ok_or(format!("topo has no node {id}"))?;
        let got = u32s(&t["locality"]);
        if got != want || !u32s(&t["cpus"]).is_empty() {
            return Err(format!(
                "node {id}: locality {got:?}, cpus {}; nearest socket {nearest} has {want:?}",
                t["cpus"]
            ));
        }
        out.push(format!("node {id}: no CPUs, local to {got:?}"));
    }
    Ok(out.join("; "))
}

fn hypervisor(topo: &Value) -> Result<String, String> {
    let h = &topo["virtualization"];
    match h["virtual_machine"].as_bool() {
        Some(true) => Ok(format!("{} ({})", h["hypervisor"], h["evidence"])),
        _ => Err(format!("topo --json virtualization: {h}")),
    }
}
