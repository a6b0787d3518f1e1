//! Reading the guest's serial console: the sections between `@@LAB-BEGIN name@@` and
//! `@@LAB-END name rc=N@@`, and the kernel's own answers the guest printed (sysfs CPU
//! and node files, numastat and /proc/stat counters around a command).

use std::collections::BTreeMap;

/// One section: its text and the exit status of the command that printed it.
#[derive(Debug, Clone)]
pub struct Section {
    pub text: String,
    pub rc: i32,
    /// The guest's uptime when the section ended (seconds).
    pub up: Option<f64>,
}

/// Every section of a console, by name, and whether the script reached its end.
#[derive(Debug, Default)]
pub struct Console {
    pub sections: BTreeMap<String, Section>,
    pub finished: bool,
}

impl Console {
    pub fn parse(console: &str) -> Console {
        let mut c = Console::default();
        let mut open: Option<(String, String)> = None;
        for line in console.lines() {
            // The first line can carry terminal escapes before the marker.
            let marker = line.find("@@LAB-").map(|i| &line[i..]);
            match (marker, &mut open) {
                (Some(m), Some((name, text))) if m.starts_with("@@LAB-END ") => {
                    let word = |key: &str| {
                        m.split_whitespace()
                            .find_map(|w| w.strip_prefix(key))
                            .map(|v| v.trim_end_matches('@').to_string())
                    };
                    let rc = word("rc=").and_then(|r| r.parse().ok()).unwrap_or(-1);
                    let up = word("up=").and_then(|r| r.parse().ok());
                    let text = std::mem::take(text);
                    c.sections
                        .insert(std::mem::take(name), Section { text, rc, up });
                    open = None;
                }
                (Some(m), None) if m.starts_with("@@LAB-BEGIN ") => {
                    let name = m["@@LAB-BEGIN ".len()..].trim_end_matches('@');
                    open = Some((name.to_string(), String::new()));
                }
                (Some(m), None) if m.starts_with("@@LAB-DONE") => c.finished = true,
                (_, Some((_, text))) => {
                    text.push_str(line);
                    text.push('\n');
                }
                _ => {}
            }
        }
        c
    }

    /// The slowest steps (guest seconds between a section's end and the previous
    /// one's), `n` of them, as text.
    pub fn slowest(&self, n: usize) -> String {
        let mut ends: Vec<(f64, &str)> = self
            .sections
            .iter()
            .filter_map(|(k, s)| Some((s.up?, k.as_str())))
            .collect();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut steps: Vec<(f64, &str)> = ends
            .iter()
            .enumerate()
            .map(|(i, (t, k))| (t - if i == 0 { 0.0 } else { ends[i - 1].0 }, *k))
            .collect();
        steps.sort_by(|a, b| b.0.total_cmp(&a.0));
        let total = ends.last().map(|e| e.0).unwrap_or(0.0);
        let top: Vec<String> = steps
            .iter()
            .take(n)
            .map(|(d, k)| format!("{k} {d:.0} s"))
            .collect();
        format!(
            "guest uptime at the end {total:.0} s; slowest: {}",
            top.join(", ")
        )
    }

    pub fn get(&self, name: &str) -> Result<&Section, String> {
        self.sections
            .get(name)
            .ok_or_else(|| format!("the guest printed no section `{name}`"))
    }

    /// A section's text as JSON, the command having succeeded.
    pub fn json(&self, name: &str) -> Result<serde_json::Value, String> {
        let s = self.get(name)?;
        if s.rc != 0 {
            let err = self.sections.get(&format!("{name}.err"));
            return Err(format!(
                "`{name}` exited with {}: {}",
                s.rc,
                err.map(|e| e.text.trim()).unwrap_or("")
            ));
        }
        serde_json::from_str(&s.text).map_err(|e| format!("`{name}` is not JSON: {e}"))
    }

    /// The lines of a JSON-lines section (results.jsonl).
    pub fn json_lines(&self, name: &str) -> Result<Vec<serde_json::Value>, String> {
        let s = self.get(name)?;
        s.text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| format!("`{name}` line: {e}")))
            .collect()
    }

    /// The kernel's counters around command `name`: (pages per node, ticks per CPU).
    pub fn deltas(&self, name: &str) -> Result<Deltas, String> {
        let s = self.get(&format!("{name}.kernel"))?;
        let mut d = Deltas::default();
        for line in s.text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let (sign, rest) = match w.first() {
                Some(&"before") => (-1i64, &w[1..]),
                Some(&"after") => (1, &w[1..]),
                _ => continue,
            };
            if let [kind, id, value] = rest {
                let (Ok(id), Ok(v)) = (id.parse::<u32>(), value.parse::<i64>()) else {
                    return Err(format!("`{name}.kernel`: unreadable line `{line}`"));
                };
                let map = if *kind == "pages" {
                    &mut d.pages
                } else {
                    &mut d.ticks
                };
                *map.entry(id).or_insert(0) += sign * v;
            }
        }
        Ok(d)
    }
}

/// Changes in the kernel's counters over one command.
#[derive(Debug, Default)]
pub struct Deltas {
    /// Pages each node served (numastat numa_hit + numa_miss).
    pub pages: BTreeMap<u32, i64>,
    /// Busy jiffies of each CPU (/proc/stat user + nice + system).
    pub ticks: BTreeMap<u32, i64>,
}

/// The kernel's CPUs (sysfs) as the guest listed them.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCpu {
    pub cpu: u32,
    pub online: bool,
    pub package: Option<u32>,
    pub core: Option<u32>,
    pub siblings: Vec<u32>,
    pub node: Option<u32>,
}

/// The kernel's NUMA nodes (sysfs).
#[derive(Debug, Clone)]
pub struct KernelNode {
    pub node: u32,
    pub cpus: Vec<u32>,
    pub mem_kb: u64,
    pub distances: Vec<u32>,
}

/// `0-3,8` -> [0, 1, 2, 3, 8].
pub fn cpulist(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            out.extend(a..=b);
        }
    }
    out
}

fn field<'a>(w: &'a [&'a str], key: &str) -> Option<&'a str> {
    w.iter()
        .position(|x| *x == key)
        .and_then(|i| w.get(i + 1))
        .copied()
}

pub fn kernel_cpus(c: &Console) -> Result<Vec<KernelCpu>, String> {
    let s = c.get("kernel.cpus")?;
    let num = |v: Option<&str>| v.and_then(|v| v.parse().ok());
    Ok(s.text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some(KernelCpu {
                cpu: num(field(&w, "cpu"))?,
                online: field(&w, "online") == Some("1"),
                package: num(field(&w, "package")),
                core: num(field(&w, "core")),
                siblings: cpulist(field(&w, "siblings").unwrap_or("")),
                node: num(field(&w, "node")),
            })
        })
        .collect())
}

pub fn kernel_nodes(c: &Console) -> Result<Vec<KernelNode>, String> {
    let s = c.get("kernel.nodes")?;
    Ok(s.text
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let dist = w.iter().position(|x| *x == "distance")?;
            Some(KernelNode {
                node: field(&w, "node")?.parse().ok()?,
                cpus: field(&w, "cpus").map(cpulist).unwrap_or_default(),
                mem_kb: field(&w, "memkb")?.parse().ok()?,
                distances: w[dist + 1..]
                    .iter()
                    .filter_map(|d| d.parse().ok())
                    .collect(),
            })
        })
        .collect())
}
