//! Memory-subsystem measurements beyond STREAM: the NUMA bandwidth and latency
//! matrices (threads on node i, memory bound to node j), the latency ladder across
//! working-set sizes, and core-to-core latency. Buffers are mapped, bound with
//! `mbind` before they are touched, and their placement read back from
//! `/proc/self/numa_maps`.

pub mod buffer;
pub mod c2c;
pub mod chase;
pub mod matrix;
pub mod stream;
