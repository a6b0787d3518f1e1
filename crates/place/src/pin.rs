//! Binding the calling thread to a CPU set, and reading back where it may run and
//! where it runs now. These are the only process-state changes this crate makes.

use std::io;

use scalescope_topo::CpuSet;

/// Restricts the calling thread to `cpus`.
///
/// # Errors
/// The OS error from `sched_setaffinity` (EINVAL when no CPU of the set is usable).
pub fn pin_current_thread(cpus: &CpuSet) -> io::Result<()> {
    let set = to_cpu_set(cpus)?;
    // SAFETY: pid 0 is the calling thread; size and pointer describe `set`.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Converts to the kernel's fixed-size set.
///
/// # Errors
/// `InvalidInput` when a CPU index does not fit `cpu_set_t` (1024 CPUs).
pub fn to_cpu_set(cpus: &CpuSet) -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for cpu in cpus.iter() {
        if cpu as usize >= capacity {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} exceeds cpu_set_t"),
            ));
        }
        // SAFETY: cpu is below the capacity of `set`.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    Ok(set)
}

/// CPUs the calling thread may run on.
pub fn current_affinity() -> Option<CpuSet> {
    scalescope_topo::affinity::process_affinity()
}

/// The CPU the calling thread is running on right now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}
