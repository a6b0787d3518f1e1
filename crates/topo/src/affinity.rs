//! The calling thread's CPU affinity, read and set through `sched_{get,set}affinity`.
//! This is the only process-wide state the topology crate touches, and only to read.

use crate::cpuset::CpuSet;

/// CPUs the calling thread may run on, `None` if the kernel refused to say.
pub fn process_affinity() -> Option<CpuSet> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size and pointer describe `set`.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    Some(
        (0..max)
            // SAFETY: `i` is below the bit capacity of `set`.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .map(|i| i as u32)
            .collect(),
    )
}
