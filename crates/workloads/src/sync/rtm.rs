//! Intel RTM (restricted transactional memory): the probe that says whether
//! transactions can commit here, one transaction run with its abort status, abort
//! causes counted by kind, and a spin lock elided with RTM.

use std::sync::atomic::Ordering;

/// Whether RTM transactions can commit here: CPUID must advertise RTM, and a probe of
/// empty transactions must see at least one commit (with TSX disabled by microcode
/// CPUID may still advertise RTM while every XBEGIN aborts).
pub fn rtm_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static USABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *USABLE.get_or_init(|| {
            std::arch::is_x86_feature_detected!("rtm")
                // CPUID advertises RTM, so XBEGIN/XEND are valid instructions to probe with.
                && (0..64).any(|_| transaction_status(|| {}).is_ok())
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Aborted transactions by cause (the EAX bits XBEGIN reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Aborts {
    /// Another thread touched the transaction's data.
    pub conflict: u64,
    /// The transaction's data did not fit the cache.
    pub capacity: u64,
    /// Explicit XABORT.
    pub explicit: u64,
    /// Interrupts, page faults, unsupported instructions.
    pub other: u64,
}

impl Aborts {
    pub(crate) fn record(&mut self, status: u32) {
        if status & (1 << 2) != 0 {
            self.conflict += 1;
        } else if status & (1 << 3) != 0 {
            self.capacity += 1;
        } else if status & 1 != 0 {
            self.explicit += 1;
        } else {
            self.other += 1;
        }
    }

    pub(crate) fn add(&mut self, o: Aborts) {
        self.conflict += o.conflict;
        self.capacity += o.capacity;
        self.explicit += o.explicit;
        self.other += o.other;
    }

    pub fn total(&self) -> u64 {
        self.conflict + self.capacity + self.explicit + self.other
    }
}

/// Runs `f` as one RTM transaction: `Ok` if it committed, `Err(status)` with
/// XBEGIN's abort status if it aborted (and all of `f`'s effects were rolled back).
/// After an abort the processor restores every register to its state at XBEGIN and
/// resumes at the instruction after it, so both outcomes leave the asm block the same
/// way. `f` should not make system calls (they abort the transaction).
///
/// Safe on any CPU: where CPUID does not advertise RTM (XBEGIN would fault as an
/// invalid instruction) it runs nothing and returns `Err(0)`, an abort without a
/// cause bit. [`rtm_available`] tells callers whether transactions can commit at all.
#[cfg(target_arch = "x86_64")]
pub fn transaction_status(f: impl FnOnce()) -> Result<(), u32> {
    if !std::arch::is_x86_feature_detected!("rtm") {
        return Err(0);
    }
    let mut status: u32 = u32::MAX;
    // SAFETY: CPUID advertises RTM (checked just above), so xbegin is a valid
    // instruction; it either starts a transaction, leaving eax at u32::MAX, or lands
    // at label 2 after an abort with the cause in eax.
    unsafe { std::arch::asm!("xbegin 2f", "2:", inout("eax") status, options(nostack)) };
    if status != u32::MAX {
        return Err(status);
    }
    f();
    // SAFETY: inside the transaction started above.
    unsafe { std::arch::asm!("xend", options(nostack)) };
    Ok(())
}

/// A spin lock elided with RTM (lock elision): a critical section first runs as a
/// transaction that reads the lock word and aborts if the lock is held; if the
/// transaction aborts, the section runs under the real lock, whose acquisition aborts
/// every transaction that read the word. Without reading the lock, a transaction could
/// commit in the middle of a lock holder's plain read-modify-write and lose it.
#[derive(Debug, Default)]
pub struct ElidedLock {
    held: std::sync::atomic::AtomicBool,
}

impl ElidedLock {
    /// Runs `f` elided, or under the lock after an abort; returns the abort status
    /// when the fallback was taken. Safe on any CPU: without RTM every attempt
    /// aborts at once (status 0, see [`transaction_status`]) and `f` runs under the
    /// lock.
    pub fn run(&self, f: impl Fn()) -> Option<u32> {
        #[cfg(target_arch = "x86_64")]
        {
            let r = transaction_status(|| {
                if self.held.load(Ordering::Relaxed) {
                    // SAFETY: inside a transaction (xabort only aborts it); code 0xff
                    // marks "lock was held".
                    unsafe { std::arch::asm!("xabort 0xff", options(nostack)) };
                }
                f();
            });
            match r {
                Ok(()) => None,
                Err(status) => {
                    self.locked(&f);
                    Some(status)
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.locked(&f);
            Some(0)
        }
    }

    fn locked(&self, f: &impl Fn()) {
        while self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        f();
        self.held.store(false, Ordering::Release);
    }
}
