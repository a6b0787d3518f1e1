//! The NAS Parallel Benchmarks (NPB 3.4.1): EP, IS and FT, each verified against
//! the official values for its class, and NPB's random number generator that they
//! share.

pub mod ep;
pub mod ft;
pub mod is;
pub mod keys;
pub mod rand;

use crate::WorkloadError;

/// An NPB problem class with official verification values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Class {
    #[default]
    S,
    W,
    A,
    B,
    /// FT C holds two 512^3 complex grids (4 GiB), IS C 2^27 keys (0.5 GiB).
    C,
}

impl Class {
    pub const ALL: [Class; 5] = [Class::S, Class::W, Class::A, Class::B, Class::C];

    /// The class's letter, as npb.json keys it.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::S => "S",
            Class::W => "W",
            Class::A => "A",
            Class::B => "B",
            Class::C => "C",
        }
    }
}

impl std::str::FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        Class::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not one of S, W, A, B, C"))
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
    /// Problem class: S, W, A, B or C (official verification values for each).
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

/// Refuses class `class` of `kernel` where the memory it needs (`need` bytes,
/// estimated before allocating) exceeds what this machine has available
/// (`MemAvailable`), with an error naming both; nothing is refused where the kernel
/// does not say.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `class`.
pub(crate) fn fits(kernel: &str, class: Class, need: u64) -> Result<(), WorkloadError> {
    fits_in(kernel, class, need, crate::budget::mem_available())
}

fn fits_in(
    kernel: &str,
    class: Class,
    need: u64,
    available: Option<u64>,
) -> Result<(), WorkloadError> {
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    match available {
        Some(a) if need > a => Err(WorkloadError::param(
            "class",
            format!(
                "{kernel} class {class} needs about {:.1} GiB (estimated before allocating), more than the {:.1} GiB this machine has available (MemAvailable); choose a smaller class",
                gib(need),
                gib(a)
            ),
        )),
        _ => Ok(()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_c_parses_and_a_class_past_the_memory_available_is_refused() {
        assert_eq!("C".parse::<Class>(), Ok(Class::C));
        assert_eq!(Class::C.as_str(), "C");
        let e = "D".parse::<Class>().unwrap_err();
        assert!(e.contains("S, W, A, B, C"), "{e}");
        let gib = 1u64 << 30;
        let e = fits_in("FT", Class::C, 4 * gib, Some(3 * gib)).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("FT class C needs about 4.0 GiB") && text.contains("3.0 GiB"),
            "{text}"
        );
        assert!(fits_in("FT", Class::C, 4 * gib, Some(5 * gib)).is_ok());
        assert!(fits_in("FT", Class::C, 4 * gib, None).is_ok());
    }

    /// Class C as NPB 3.4.1 defines it (NPB-CPP 5bc1e2c4): IS/is.cpp's CLASS C
    /// block and its C_test_index_array / C_test_rank_array, FT/ft.cpp's `verify`
    /// (512^3, 20 iterations, csum_ref[1..20]), sys/setparams.cpp's EP `m = 32` and
    /// EP/ep.cpp's sx/sy for M == 32.
    #[test]
    fn class_c_is_npbs() {
        let all: serde_json::Value = serde_json::from_str(NPB_JSON).unwrap();
        let is = &all["IS"];
        assert_eq!(is["params"]["C"], serde_json::json!([27, 23, 10]));
        assert_eq!(
            is["test_index"]["C"],
            serde_json::json!([44172927, 72999161, 74326391, 129606274, 21736814])
        );
        assert_eq!(
            is["test_rank"]["C"],
            serde_json::json!([61147, 882988, 266290, 133997595, 133525895])
        );
        let ft = &all["FT"];
        assert_eq!(ft["params"]["C"], serde_json::json!([512, 512, 512, 20]));
        let sums = ft["checksums"]["C"].as_array().unwrap();
        assert_eq!(sums.len(), 20);
        assert_eq!(sums[0], serde_json::json!([519.5078707457, 514.9019699238]));
        assert_eq!(
            sums[19],
            serde_json::json!([512.9714421109, 512.3465164008])
        );
        let ep = &all["EP"];
        assert_eq!(ep["params"]["C"]["M"], 32);
        assert_eq!(
            ep["sx_sy"]["C"],
            serde_json::json!([4.764367927995374e4, -8.084072988043731e4])
        );
        assert!(ep["gaussian_pairs_observed"].get("C").is_none());
    }
}
