//! The machine shapes the lab boots: what QEMU is given (sockets x cores x threads,
//! NUMA nodes, the SLIT, a memory-only node) and what the guest script is asked to do
//! (threads for the placement sweeps, a CPU to take offline, a cpuset to run in).

/// One emulated machine and its script options.
#[derive(Debug, Clone)]
pub struct Shape {
    pub name: &'static str,
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    /// NUMA nodes with CPUs: one per socket.
    /// Extra memory-only nodes (after the socket nodes), each with its SLIT row.
    pub memory_only: Vec<Vec<u32>>,
    /// SLIT between socket nodes i and j (i != j).
    pub slit: fn(u32, u32) -> u32,
    /// Threads for the placement sweeps.
    pub sweep_threads: u32,
    /// A CPU taken offline before anything runs.
    pub offline: Option<u32>,
    /// A cgroup v2 cpuset (cpulist) the script moves itself into.
    pub cpuset: Option<&'static str>,
    /// Threads for TPC-H's numa layout (None: not run).
    pub tpch_threads: Option<u32>,
    /// Run `mem matrix`.
    pub matrix: bool,
    /// Memory per node, MiB.
    pub node_mib: u32,
    /// Nodes to run every memory policy on (None: all).
    pub policy_nodes: Option<&'static str>,
    /// Run `study graph-mining --budget 2m`, `study numa-structure` and a sweep of
    /// the OpenMP probe placed by its own runtime.
    pub studies: bool,
}

fn slit_21(_: u32, _: u32) -> u32 {
    21
}

fn slit_12(_: u32, _: u32) -> u32 {
    12
}

/// A ring of four sockets: neighbours 16 apart, the opposite socket 22.
fn slit_ring4(i: u32, j: u32) -> u32 {
    if (i + 2) % 4 == j {
        22
    } else {
        16
    }
}

impl Shape {
    fn base(name: &'static str, sockets: u32, cores: u32, threads: u32) -> Shape {
        Shape {
            name,
            sockets,
            cores,
            threads,
            memory_only: Vec::new(),
            slit: slit_21,
            sweep_threads: 4,
            offline: None,
            cpuset: None,
            tpch_threads: None,
            matrix: false,
            node_mib: 256,
            policy_nodes: None,
            studies: false,
        }
    }

    pub fn cpus(&self) -> u32 {
        self.sockets * self.cores * self.threads
    }

    pub fn cpus_per_socket(&self) -> u32 {
        self.cores * self.threads
    }

    /// Every node: socket nodes first, then memory-only ones.
    pub fn nodes(&self) -> u32 {
        self.sockets + self.memory_only.len() as u32
    }

    /// The SLIT QEMU is given, row by row.
    pub fn distance(&self, i: u32, j: u32) -> u32 {
        let s = self.sockets;
        match (i < s, j < s) {
            _ if i == j => 10,
            (true, true) => (self.slit)(i, j),
            (true, false) => self.memory_only[(j - s) as usize][i as usize],
            (false, _) => self.memory_only[(i - s) as usize][j as usize],
        }
    }

    /// The kernel command line words for the guest script.
    pub fn script_args(&self) -> String {
        let mut args = format!("lab=shape lab.threads={}", self.sweep_threads);
        if let Some(c) = self.offline {
            args += &format!(" lab.offline={c}");
        }
        if let Some(c) = self.cpuset {
            args += &format!(" lab.cpuset={c}");
        }
        if let Some(t) = self.tpch_threads {
            args += &format!(" lab.tpch={t}");
        }
        if self.matrix {
            args += " lab.matrix=1";
        }
        if let Some(n) = self.policy_nodes {
            args += &format!(" lab.nodes={n}");
        }
        if self.studies {
            args += " lab.studies=1";
        }
        args
    }
}

/// The lab's machines.
pub fn all() -> Vec<Shape> {
    vec![
        Shape {
            // TPC-H runs on this shape only: tpchgen builds one 300 MiB text pool
            // (about 20 s of emulated time), in the first worker that asks for it.
            tpch_threads: Some(2),
            // In a 256 MiB node that pool filled the node, and the partition its
            // worker built next fell back to the other node (first touch takes any
            // node when the local one is full): the numa layout check failed for
            // want of memory, not placement.
            node_mib: 512,
            matrix: true,
            // The two-package SMT shape the studies are checked on (issue 34).
            studies: true,
            ..Shape::base("2s-2c-2t", 2, 2, 2)
        },
        Shape {
            slit: slit_ring4,
            matrix: true,
            ..Shape::base("4s-2c-2t", 4, 2, 2)
        },
        Shape {
            slit: slit_12,
            matrix: true,
            node_mib: 192,
            // Every policy on every node is the 4-node shape's job; here the first
            // and the last node (the nodemask's first and last bits).
            policy_nodes: Some("0,7"),
            ..Shape::base("8s-1c-1t-slit12", 8, 1, 1)
        },
        Shape {
            offline: Some(5),
            ..Shape::base("2s-2c-2t-cpu5-offline", 2, 2, 2)
        },
        Shape {
            cpuset: Some("2-5"),
            sweep_threads: 2,
            ..Shape::base("2s-2c-2t-cpuset-2-5", 2, 2, 2)
        },
        Shape {
            // Node 2 has memory and no CPUs: 17 from socket 0, 28 from socket 1.
            memory_only: vec![vec![17, 28, 10]],
            sweep_threads: 2,
            ..Shape::base("2s-2c-1t-memory-only-node", 2, 2, 1)
        },
    ]
}
