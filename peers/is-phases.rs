// IS's counting pass measured apart from scalescope (issue 36, fourth round;
// docs/PERFORMANCE.md): 2^N keys drawn as NPB's IS draws them (sum of four NPB
// deviates), ranked by the kernel's method (a one-byte-per-value histogram, then a
// running total) with the counting pass and the running total timed apart, beside
// a bucketed ranking (NPB's method: bucket sizes, a scatter by the high bits, a
// count per bucket), with variants chosen by environment: PF=D prefetches each
// key's counter D keys ahead, HUGE=1 / HK=1 put the histogram / the keys on
// transparent huge pages, V2=1 and UNCHK=1 try a four-way bucket count and an
// unchecked scatter, CAP=N a per-bucket buffered count. Every ranking is compared
// with the plain one ("same true"). A scratch tool, not part of the build:
//
//   rustc -C opt-level=3 peers/is-phases.rs -o /tmp/is-phases
//   flock /tmp/bench.lock /tmp/is-phases 27 23 15     # class C: 2^27 keys, 2^23 values, 2^15 per bucket
//   PF=64 /tmp/is-phases 27 23 15
use std::time::Instant;
const A: u64 = 1_220_703_125;
const MASK46: u64 = (1 << 46) - 1;
const R46: f64 = 1.0 / (1u64 << 46) as f64;
fn keys(n: usize, max_key: usize) -> Vec<u32> {
    let k = (max_key / 4) as f64;
    let mut s = 314_159_265u64;
    (0..n).map(|_| { let mut x = 0.0; for _ in 0..4 { s = A.wrapping_mul(s) & MASK46; x += s as f64 * R46; } (k * x) as u32 }).collect()
}
fn current(keys: &[u32], m: usize, hist: &mut [u8], below: &mut [u32]) -> (f64, f64) {
    let t0 = Instant::now();
    hist.fill(0);
    let mut wraps = 0;
    let d: usize = std::env::var("PF").map(|v| v.parse().unwrap()).unwrap_or(0);
    if d > 0 {
        let n = keys.len();
        for i in 0..n {
            if i + d < n { unsafe { use std::arch::x86_64::*; _mm_prefetch::<_MM_HINT_T0>(hist.as_ptr().add(keys[i + d] as usize) as *const i8); } }
            let k = keys[i]; let c = &mut hist[k as usize]; *c = c.wrapping_add(1); if *c == 0 { wraps += 1; }
        }
    } else {
    for &k in keys { let c = &mut hist[k as usize]; *c = c.wrapping_add(1); if *c == 0 { wraps += 1; } }
    }
    let t1 = Instant::now();
    let mut run = 0u32;
    for j in 0..m { below[j] = run; run += hist[j] as u32; }
    below[m] = run + wraps * 256;
    (t1.duration_since(t0).as_secs_f64(), t1.elapsed().as_secs_f64())
}
fn bucketed(keys: &[u32], m: usize, shift: u32, buf: &mut [u16], below: &mut [u32]) -> (f64, f64, f64) {
    let nb = (m >> shift).max(1);
    let t0 = Instant::now();
    let mut counts = vec![0u32; nb];
    for &k in keys { counts[(k >> shift) as usize] += 1; }
    let mut starts = vec![0usize; nb + 1];
    for b in 0..nb { starts[b + 1] = starts[b] + counts[b] as usize; }
    let t1 = Instant::now();
    let mut at = starts.clone();
    let mask = (1u32 << shift) - 1;
    if std::env::var("UNCHK").is_ok() {
        let mut ptrs: Vec<*mut u16> = at.iter().map(|&a| unsafe { buf.as_mut_ptr().add(a) }).collect();
        for &k in keys { let b = (k >> shift) as usize; unsafe { let p = ptrs.get_unchecked_mut(b); **p = (k & mask) as u16; *p = p.add(1); } }
    } else {
    for &k in keys { let b = (k >> shift) as usize; buf[at[b]] = (k & mask) as u16; at[b] += 1; }
    }
    let t2 = Instant::now();
    let w = 1usize << shift;
    for b in 0..nb {
        let r = &mut below[b * w..(b + 1) * w];
        r.fill(0);
        for &o in &buf[starts[b]..starts[b + 1]] { r[o as usize] += 1; }
        let mut run = starts[b] as u32;
        for v in r.iter_mut() { let c = *v; *v = run; run += c; }
    }
    below[m] = keys.len() as u32;
    (t1.duration_since(t0).as_secs_f64(), t2.duration_since(t1).as_secs_f64(), t2.elapsed().as_secs_f64())
}
extern "C" { fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32; }
fn huge<T: Copy + Default>(n: usize) -> &'static mut [T] {
    let bytes = (n * std::mem::size_of::<T>()).div_ceil(1 << 21) << 21;
    let l = std::alloc::Layout::from_size_align(bytes, 1 << 21).unwrap();
    unsafe { let p = std::alloc::alloc_zeroed(l); let r = madvise(p, bytes, 14); assert_eq!(r, 0); std::slice::from_raw_parts_mut(p as *mut T, n) }
}
fn bucketed2(keys: &[u32], m: usize, shift: u32, buf: &mut [u16], below: &mut [u32]) -> (f64, f64, f64) {
    let nb = (m >> shift).max(1);
    let t0 = Instant::now();
    let mut c4 = vec![[0u32; 4]; nb];
    let mut ch = keys.chunks_exact(4);
    for q in &mut ch { for j in 0..4 { c4[(q[j] >> shift) as usize][j] += 1; } }
    for &k in ch.remainder() { c4[(k >> shift) as usize][0] += 1; }
    let mut starts = vec![0usize; nb + 1];
    for b in 0..nb { starts[b + 1] = starts[b] + c4[b].iter().sum::<u32>() as usize; }
    let t1 = Instant::now();
    const L: usize = 32;
    let mut wc = vec![[0u16; L]; nb];
    let mut fill = vec![0u8; nb];
    let mut at = starts.clone();
    let mask = (1u32 << shift) - 1;
    for &k in keys {
        let b = (k >> shift) as usize;
        let f = fill[b] as usize;
        wc[b][f] = (k & mask) as u16;
        if f + 1 == L {
            buf[at[b]..at[b] + L].copy_from_slice(&wc[b]);
            at[b] += L; fill[b] = 0;
        } else { fill[b] = (f + 1) as u8; }
    }
    for b in 0..nb { let f = fill[b] as usize; buf[at[b]..at[b] + f].copy_from_slice(&wc[b][..f]); }
    let t2 = Instant::now();
    let w = 1usize << shift;
    for b in 0..nb {
        let r = &mut below[b * w..(b + 1) * w];
        r.fill(0);
        for &o in &buf[starts[b]..starts[b + 1]] { r[o as usize] += 1; }
        let mut run = starts[b] as u32;
        for v in r.iter_mut() { let c = *v; *v = run; run += c; }
    }
    below[m] = keys.len() as u32;
    (t1.duration_since(t0).as_secs_f64(), t2.duration_since(t1).as_secs_f64(), t2.elapsed().as_secs_f64())
}
fn buffered(keys: &[u32], m: usize, shift: u32, cap: usize, hist: &mut [u8], below: &mut [u32]) -> (f64, f64) {
    let t0 = Instant::now();
    hist.fill(0);
    let nb = (m >> shift).max(1);
    let mask = (1u32 << shift) - 1;
    let mut bufs = vec![0u16; nb * cap];
    let mut fill = vec![0usize; nb];
    let mut wraps = 0u32;
    let flush = |hist: &mut [u8], b: usize, offs: &[u16], wraps: &mut u32| {
        let region = &mut hist[b << shift..(b + 1) << shift];
        for &o in offs { let c = &mut region[o as usize]; *c = c.wrapping_add(1); if *c == 0 { *wraps += 1; } }
    };
    for &k in keys {
        let b = (k >> shift) as usize;
        let f = fill[b];
        bufs[b * cap + f] = (k & mask) as u16;
        if f + 1 == cap { flush(hist, b, &bufs[b * cap..(b + 1) * cap], &mut wraps); fill[b] = 0; } else { fill[b] = f + 1; }
    }
    for b in 0..nb { let f = fill[b]; flush(hist, b, &bufs[b * cap..b * cap + f], &mut wraps); }
    let t1 = Instant::now();
    let mut run = 0u32;
    for j in 0..m { below[j] = run; run += hist[j] as u32; }
    below[m] = run + wraps * 256;
    (t1.duration_since(t0).as_secs_f64(), t1.elapsed().as_secs_f64())
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (nl, ml): (u32, u32) = (a[1].parse().unwrap(), a[2].parse().unwrap());
    let shift: u32 = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(15);
    let (n, m) = (1usize << nl, 1usize << ml);
    let kv = keys(n, m);
    let keys: &[u32] = if std::env::var("HK").is_ok() { let h = huge::<u32>(n); h.copy_from_slice(&kv); drop(kv); h } else { Box::leak(kv.into_boxed_slice()) };
    let hp = std::env::var("HUGE").is_ok();
    let mut hv = vec![0u8; m];
    let hist: &mut [u8] = if hp { huge::<u8>(m) } else { &mut hv };
    let mut b1 = vec![0u32; m + 1];
    let mut b2 = vec![0u32; m + 1];
    let mut buf = vec![0u16; n];
    if let Ok(cap) = std::env::var("CAP") { let cap: usize = cap.parse().unwrap();
        let mut b3 = vec![0u32; m + 1];
        for it in 0..4 {
            let (c, p) = current(keys, m, hist, &mut b1);
            let (x, y) = buffered(keys, m, shift.min(ml), cap, hist, &mut b3);
            println!("it {it} current {:.1} ms | buffered {:.1} + {:.1} ms | same {}", (c+p)*1e3, x*1e3, y*1e3, b1 == b3);
        }
        return;
    }
    for it in 0..4 {
        let (c, p) = current(keys, m, hist, &mut b1);
        let (x, y, z) = if std::env::var("V2").is_ok() { bucketed2(keys, m, shift.min(ml), &mut buf, &mut b2) } else { bucketed(keys, m, shift.min(ml), &mut buf, &mut b2) };
        println!("it {it} current count {:.1} ms prefix {:.1} ms total {:.1} | bucketed count {:.1} scatter {:.1} rank {:.1} total {:.1} | same {}", c*1e3, p*1e3, (c+p)*1e3, x*1e3, y*1e3, z*1e3, (x+y+z)*1e3, b1 == b2);
    }
}
