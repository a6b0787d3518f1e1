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
