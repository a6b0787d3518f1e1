//! TPC-H Q1 and Q6 over an in-memory, columnar lineitem (TPC-H specification 3.0.1,
//! queries 1 and 6 with their validation parameters).
//!
//! Data: generated in-process by the `tpchgen` crate (identical to dbgen 2.14) in
//! one part per worker, or loaded from a `.tbl` file. Columns are compact: quantity
//! and discount/tax in hundredths as bytes, price in cents as u32, ship date as days
//! since 1970, return flag and line status folded into one group code. With the
//! `numa` layout each worker generates (first-touches) the partition it later scans,
//! so its pages are local to it; `naive` builds everything on one thread.
//!
//! Arithmetic is exact: sums are integers in the smallest unit (cents, 1e-4, 1e-6),
//! as the specification's decimal types allow; only the averages are doubles.

pub mod cache;
pub mod data;
pub mod query;
pub mod settings;
pub mod workload;

pub use data::{days_from_civil, generate_part, q1_cutoff, read_tbl, Layout, Lineitem, Partition};
pub use query::{bytes_per_row, check, q1, q6, reference};
pub use settings::{Query, ScaleFactor, TpchSettings};
pub use workload::Tpch;

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "x86_64")]
    use super::query::q6_scan_avx2;
    use super::query::{fixed, q6_scan};
    use super::*;

    use crate::pool::test_pool as pool;

    #[test]
    fn dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(q1_cutoff(), days_from_civil(1998, 9, 2));
    }

    #[test]
    fn q1_and_q6_at_sf_0_01_equal_the_reference_in_both_layouts() {
        for (threads, layout) in [(1, Layout::Numa), (2, Layout::Numa), (2, Layout::Naive)] {
            let p = pool(threads);
            let li = Lineitem::generate(0.01, &p, layout);
            assert_eq!(li.rows(), 60_175);
            check(&q1(&li, &p), &reference("q1", 0.01).unwrap()).unwrap();
            check(&q6(&li, &p), &reference("q6", 0.01).unwrap()).unwrap();
        }
    }

    #[test]
    fn avx2_and_portable_q6_agree() {
        let p = generate_part(0.01, 1, 1);
        let (lo, hi) = (days_from_civil(1994, 1, 1), days_from_civil(1995, 1, 1));
        let portable = q6_scan(
            &p.shipdate,
            &p.discount,
            &p.quantity,
            &p.extprice_cents,
            lo,
            hi,
        );
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // Odd lengths exercise the scalar tail too.
            for n in [p.len(), p.len() - 3, 1000, 7] {
                // SAFETY: AVX2 is supported (checked above).
                let simd = unsafe {
                    q6_scan_avx2(
                        &p.shipdate[..n],
                        &p.discount[..n],
                        &p.quantity[..n],
                        &p.extprice_cents[..n],
                        lo,
                        hi,
                    )
                };
                assert_eq!(
                    simd,
                    q6_scan(
                        &p.shipdate[..n],
                        &p.discount[..n],
                        &p.quantity[..n],
                        &p.extprice_cents[..n],
                        lo,
                        hi
                    )
                );
            }
        }
        assert_eq!(
            fixed(u128::from(portable), 4),
            reference("q6", 0.01).unwrap()[1]
        );
    }

    #[test]
    fn check_catches_a_wrong_digit() {
        let r = reference("q6", 0.01).unwrap();
        let mut bad = r.clone();
        bad[1] = "1193053.2254".into();
        assert!(check(&bad, &r).unwrap_err().contains("column 1"));
        assert!(reference("q1", 3.0).is_none());
    }

    #[test]
    fn tbl_errors_name_the_line_and_field() {
        let dir = std::env::temp_dir().join(format!("scalescope-tbl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.tbl");
        std::fs::write(&f, "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|x|\n1|2|3|4|17|21x68.23|0.04|0.02|N|O|1996-03-13|a|b|c|d|e|\n").unwrap();
        let e = read_tbl(&f).unwrap_err().to_string();
        assert!(
            e.contains("bad.tbl:2") && e.contains("field 6 `21x68.23`"),
            "{e}"
        );
        std::fs::write(&f, "1|2|3\n").unwrap();
        assert!(read_tbl(&f).unwrap_err().to_string().contains("bad.tbl:1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
