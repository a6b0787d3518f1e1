//! The NAS Parallel Benchmarks (NPB 3.4.1): EP, IS and FT, each verified against
//! the official values for its class, and NPB's random number generator that they
//! share.

pub mod ep;
pub mod ft;
pub mod is;

use crate::WorkloadError;

/// An NPB problem class with official verification values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Class {
    #[default]
    S,
    W,
    A,
    B,
}

impl Class {
    pub const ALL: [Class; 4] = [Class::S, Class::W, Class::A, Class::B];

    /// The class's letter, as npb.json keys it.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::S => "S",
            Class::W => "W",
            Class::A => "A",
            Class::B => "B",
        }
    }
}

impl std::str::FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        Class::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not one of S, W, A, B"))
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The settings of EP, IS and FT (`npb ep|is|ft` flags, `sweep --workload
/// ep|is|ft --param` keys): the problem class.
#[derive(Debug, Clone, PartialEq, Eq, Default, clap::Args)]
pub struct NpbSettings {
    /// Problem class: S, W, A or B (official verification values for each).
    #[arg(long, default_value_t = Class::default())]
    pub class: Class,
}

/// The official values, from NPB 3.4.1 as recorded in tests/fixtures/npb.json.
pub(crate) static NPB_JSON: &str = include_str!("../../../../tests/fixtures/npb.json");

impl NpbSettings {
    /// The settings of class `class`, parsed as the flag and the parameter are.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming `class`.
    pub fn of(class: &str) -> Result<NpbSettings, WorkloadError> {
        let class = class
            .parse()
            .map_err(|e: String| WorkloadError::param("class", e))?;
        Ok(NpbSettings { class })
    }
}

/// `class`'s entry in one of a kernel's tables of official values.
///
/// # Errors
/// [`WorkloadError::Reference`] where the table has no entry for the class.
pub(crate) fn official<'a, T>(
    table: &'a std::collections::BTreeMap<String, T>,
    class: Class,
    kernel: &str,
) -> Result<&'a T, WorkloadError> {
    table.get(class.as_str()).ok_or_else(|| {
        WorkloadError::Reference(format!("npb.json {kernel}: no values for class {class}"))
    })
}

/// One kernel's section (`EP`, `IS`, `FT`) of the official values.
///
/// # Errors
/// [`WorkloadError::Reference`] where the embedded file lacks the section or it
/// does not have the kernel's shape.
pub(crate) fn reference_section<T: serde::de::DeserializeOwned>(
    kernel: &str,
) -> Result<T, WorkloadError> {
    let bad = |detail: String| WorkloadError::Reference(format!("npb.json {kernel}: {detail}"));
    let all: serde_json::Value = serde_json::from_str(NPB_JSON).map_err(|e| bad(e.to_string()))?;
    let section = all
        .get(kernel)
        .cloned()
        .ok_or_else(|| bad("missing".into()))?;
    serde_json::from_value(section).map_err(|e| bad(e.to_string()))
}

pub mod rand {
    //! NPB's linear congruential generator, x <- a*x mod 2^46 with a = 5^13, computed in
    //! 64-bit integers: `a*x mod 2^46` is the low 46 bits of the wrapping product, so
    //! this is bit-identical to NPB's split double-precision `randlc` and `vranlc`.
    //! Shared by EP and IS, with NPB's jump-ahead (`find_my_seed`) by binary powers.

    /// 5^13, NPB's multiplier.
    pub const A: u64 = 1_220_703_125;
    pub const MASK46: u64 = (1 << 46) - 1;
    /// 2^-46: a state as a deviate in (0, 1).
    pub const R46: f64 = 1.0 / (1u64 << 46) as f64;

    /// One step: the next state.
    #[inline]
    pub fn next(x: u64, a: u64) -> u64 {
        a.wrapping_mul(x) & MASK46
    }

    /// a^(2^k) mod 2^46.
    pub fn pow2k(a: u64, k: u32) -> u64 {
        (0..k).fold(a, |t, _| next(t, t))
    }

    /// The state `n` steps after `x`.
    pub fn jump(mut x: u64, mut n: u64, mut a: u64) -> u64 {
        while n > 0 {
            if n & 1 == 1 {
                x = next(x, a);
            }
            a = next(a, a);
            n >>= 1;
        }
        x
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// NPB's randlc in double precision, transcribed, to check the integer form.
        fn randlc(x: &mut f64, a: f64) -> f64 {
            let r23 = 0.5f64.powi(23);
            let (r46, t23) = (r23 * r23, 2f64.powi(23));
            let t46 = t23 * t23;
            let a1 = (r23 * a).trunc();
            let a2 = a - t23 * a1;
            let x1 = (r23 * *x).trunc();
            let x2 = *x - t23 * x1;
            let t1 = a1 * x2 + a2 * x1;
            let t2 = (r23 * t1).trunc();
            let z = t1 - t23 * t2;
            let t3 = t23 * z + a2 * x2;
            let t4 = (r46 * t3).trunc();
            *x = t3 - t46 * t4;
            r46 * *x
        }

        #[test]
        fn integer_generator_matches_randlc() {
            for seed in [271_828_183u64, 314_159_265] {
                let (mut xd, mut xi) = (seed as f64, seed);
                for _ in 0..10_000 {
                    let d = randlc(&mut xd, A as f64);
                    xi = next(xi, A);
                    assert_eq!(d, xi as f64 * R46);
                }
            }
        }

        #[test]
        fn jumping_equals_stepping() {
            let mut x = 314_159_265;
            for _ in 0..1000 {
                x = next(x, A);
            }
            assert_eq!(jump(314_159_265, 1000, A), x);
            assert_eq!(jump(7, 3, pow2k(A, 2)), jump(7, 12, A));
        }
    }
}
