//! Pinning changes process state, so it lives in its own test binary: on this
//! machine, a thread placed by a strategy really runs where planned.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use scalescope_place::pin::{current_affinity, current_cpu, pin_current_thread};
use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Source;

#[test]
fn placed_threads_run_where_planned() {
    let topo = Source::Live.load().unwrap();
    let n = topo.usable_cpus().len();
    let placement = place(&topo, &PlaceRequest::new(Strategy::CoresFirst, n)).unwrap();
    let handles: Vec<_> = placement
        .threads
        .clone()
        .into_iter()
        .map(|cpus| {
            std::thread::spawn(move || {
                pin_current_thread(&cpus).unwrap();
                // Spin briefly so the scheduler has moved us if it is going to.
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = x.wrapping_add(i * i);
                }
                std::hint::black_box(x);
                (cpus, current_affinity().unwrap(), current_cpu().unwrap())
            })
        })
        .collect();
    for h in handles {
        let (planned, affinity, running_on) = h.join().unwrap();
        assert_eq!(affinity, planned);
        assert!(
            planned.contains(running_on),
            "running on {running_on}, planned {planned}"
        );
    }
}

#[test]
fn pinning_to_a_missing_cpu_fails_cleanly() {
    let err = std::thread::spawn(|| pin_current_thread(&[1000].into_iter().collect()).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(err.raw_os_error(), Some(libc_einval()));
}

fn libc_einval() -> i32 {
    22
}
