//! Sets of OS indexes: [`CpuSet`] (processing units) and [`NodeSet`] (NUMA nodes).
//!
//! This module owns the three textual forms these sets take on Linux and in hwloc:
//! the cpulist (`0-3,8,10-11`, sysfs `*_list` files and every CLI), the kernel's hex
//! mask (`ff,00000001`, sysfs `cpumap`/`*_siblings`: 32-bit words, most significant
//! first), and hwloc's bitmap (`0x000000ff,0x00000001`, hwloc XML). Parsing never
//! panics; every error says what was wrong.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Largest OS index accepted from text. Linux's NR_CPUS tops out at 8192; the bound
/// stops a hostile `0-4000000000` from allocating the machine away.
pub const MAX_INDEX: u32 = 1 << 16;

/// Why a set could not be parsed from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetParseError {
    #[error("`{token}` is not a number or a range like 0-3")]
    BadToken { token: String },
    #[error("range `{token}` runs backwards")]
    Backwards { token: String },
    #[error("index {index} is larger than the supported maximum {MAX_INDEX}")]
    TooLarge { index: u64 },
    #[error("`{word}` is not a hexadecimal mask word")]
    BadMaskWord { word: String },
}

macro_rules! id_set {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(BTreeSet<u32>);

        impl $name {
            /// The empty set.
            pub fn new() -> Self {
                Self(BTreeSet::new())
            }
            /// Adds one index; returns whether it was new.
            pub fn insert(&mut self, index: u32) -> bool {
                self.0.insert(index)
            }
            pub fn contains(&self, index: u32) -> bool {
                self.0.contains(&index)
            }
            pub fn len(&self) -> usize {
                self.0.len()
            }
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
            /// Indexes in increasing order.
            pub fn iter(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
                self.0.iter().copied()
            }
            pub fn first(&self) -> Option<u32> {
                self.0.first().copied()
            }
            pub fn last(&self) -> Option<u32> {
                self.0.last().copied()
            }
            pub fn union(&self, other: &Self) -> Self {
                Self(self.0.union(&other.0).copied().collect())
            }
            pub fn intersection(&self, other: &Self) -> Self {
                Self(self.0.intersection(&other.0).copied().collect())
            }
            pub fn difference(&self, other: &Self) -> Self {
                Self(self.0.difference(&other.0).copied().collect())
            }
            pub fn is_subset(&self, other: &Self) -> bool {
                self.0.is_subset(&other.0)
            }
            pub fn is_superset_of(&self, other: &Self) -> bool {
                other.0.is_subset(&self.0)
            }
            pub fn intersects(&self, other: &Self) -> bool {
                self.0.intersection(&other.0).next().is_some()
            }
            /// Parses a cpulist such as `0-3,8,10-11` (empty text is the empty set).
            ///
            /// # Errors
            /// [`SetParseError`] naming the first bad token.
            pub fn parse_list(text: &str) -> Result<Self, SetParseError> {
                parse_list(text).map(Self)
            }
            /// Parses the kernel's hex mask such as `ff,00000001`.
            ///
            /// # Errors
            /// [`SetParseError::BadMaskWord`] naming the bad word.
            pub fn parse_mask(text: &str) -> Result<Self, SetParseError> {
                parse_mask(text).map(Self)
            }
            /// Parses hwloc's bitmap text such as `0x000000ff,0x00000001`.
            ///
            /// # Errors
            /// [`SetParseError::BadMaskWord`] naming the bad word.
            pub fn parse_hwloc(text: &str) -> Result<Self, SetParseError> {
                parse_hwloc(text).map(Self)
            }
            /// The cpulist form, `0-3,8`.
            pub fn to_list_string(&self) -> String {
                format_list(&self.0)
            }
            /// The kernel/Slurm hex mask form, `0x1f`.
            pub fn to_hex_mask(&self) -> String {
                format_hex(&self.0)
            }
        }

        impl FromIterator<u32> for $name {
            fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
                Self(iter.into_iter().collect())
            }
        }

        impl Extend<u32> for $name {
            fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
                self.0.extend(iter)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_list_string())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.to_list_string())
            }
        }

        /// Serialized as a sorted JSON array of indexes.
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                Vec::<u32>::deserialize(d).map(|v| v.into_iter().collect())
            }
        }
    };
}

id_set!(
    /// A set of processing units by OS index (what `sched_setaffinity` takes).
    CpuSet
);
id_set!(
    /// A set of NUMA nodes by OS index (what `mbind`/`set_mempolicy` take).
    NodeSet
);

fn parse_index(token: &str, whole: &str) -> Result<u32, SetParseError> {
    let t = token.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SetParseError::BadToken {
            token: whole.trim().to_string(),
        });
    }
    let value: u64 = t
        .parse()
        .map_err(|_| SetParseError::TooLarge { index: u64::MAX })?;
    if value > u64::from(MAX_INDEX) {
        return Err(SetParseError::TooLarge { index: value });
    }
    Ok(value as u32)
}

fn parse_list(text: &str) -> Result<BTreeSet<u32>, SetParseError> {
    let mut out = BTreeSet::new();
    let text = text.trim();
    if text.is_empty() {
        return Ok(out);
    }
    for token in text.split(',') {
        // The kernel also writes strided ranges (`0-15:2` means 0,2,..14) in some files.
        let (range, stride) = match token.split_once(':') {
            Some((r, s)) => (r, parse_index(s, token)?.max(1)),
            None => (token, 1),
        };
        match range.split_once('-') {
            Some((a, b)) => {
                let (lo, hi) = (parse_index(a, token)?, parse_index(b, token)?);
                if hi < lo {
                    return Err(SetParseError::Backwards {
                        token: token.trim().to_string(),
                    });
                }
                out.extend((lo..=hi).step_by(stride as usize));
            }
            None => {
                out.insert(parse_index(range, token)?);
            }
        }
    }
    Ok(out)
}

/// Words are 32 bits each, most significant first, as `bitmap_print_to_pagebuf` writes.
fn parse_mask_words<'a>(
    words: impl DoubleEndedIterator<Item = &'a str>,
) -> Result<BTreeSet<u32>, SetParseError> {
    let mut out = BTreeSet::new();
    for (word_index, word) in words.rev().enumerate() {
        let w = word.trim();
        if w.is_empty() {
            continue; // hwloc writes `0x1,,0x2` for runs of zero words
        }
        let value = u32::from_str_radix(w, 16)
            .map_err(|_| SetParseError::BadMaskWord { word: w.into() })?;
        let base = u64::try_from(word_index).unwrap_or(u64::MAX) * 32;
        for bit in 0..32u64 {
            if value & (1 << bit) != 0 {
                let index = base + bit;
                if index > u64::from(MAX_INDEX) {
                    return Err(SetParseError::TooLarge { index });
                }
                out.insert(index as u32);
            }
        }
    }
    Ok(out)
}

fn parse_mask(text: &str) -> Result<BTreeSet<u32>, SetParseError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(BTreeSet::new());
    }
    parse_mask_words(text.split(','))
}

fn parse_hwloc(text: &str) -> Result<BTreeSet<u32>, SetParseError> {
    let text = text.trim();
    // `0xf...f,...` marks an infinite set (bits set to the end); the finite part is
    // what a topology can hold.
    let text = text.strip_prefix("0xf...f,").unwrap_or(text);
    if text == "0xf...f" {
        return Ok(BTreeSet::new());
    }
    let words: Vec<&str> = text
        .split(',')
        .map(|w| {
            let w = w.trim();
            w.strip_prefix("0x").unwrap_or(w)
        })
        .collect();
    parse_mask_words(words.into_iter())
}

fn format_list(set: &BTreeSet<u32>) -> String {
    let mut parts = Vec::new();
    let mut iter = set.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end = iter.next().unwrap_or(end);
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

fn format_hex(set: &BTreeSet<u32>) -> String {
    let Some(&max) = set.iter().next_back() else {
        return "0x0".into();
    };
    let mut nibbles = vec![0u8; max as usize / 4 + 1];
    for &i in set {
        nibbles[i as usize / 4] |= 1 << (i % 4);
    }
    let digits: String = nibbles
        .iter()
        .rev()
        .map(|n| char::from_digit(u32::from(*n), 16).unwrap_or('0'))
        .collect();
    format!("0x{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn list_round_trip() {
        let s = CpuSet::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_list_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse_list("\n").unwrap(), CpuSet::new());
        assert_eq!(
            CpuSet::parse_list("0-6:2").unwrap().to_list_string(),
            "0,2,4,6"
        );
    }

    #[test]
    fn list_errors_name_the_token() {
        assert_eq!(
            CpuSet::parse_list("0-3,x").unwrap_err(),
            SetParseError::BadToken { token: "x".into() }
        );
        assert!(matches!(
            CpuSet::parse_list("5-2"),
            Err(SetParseError::Backwards { .. })
        ));
        assert!(matches!(
            CpuSet::parse_list("0-4000000000"),
            Err(SetParseError::TooLarge { .. })
        ));
        assert!(CpuSet::parse_list("-").is_err());
        assert!(CpuSet::parse_list("1,,2").is_err());
    }

    #[test]
    fn kernel_mask_words_are_most_significant_first() {
        let s = CpuSet::parse_mask("00000001,00000003\n").unwrap();
        assert_eq!(s.to_list_string(), "0-1,32");
        assert!(CpuSet::parse_mask("zz").is_err());
    }

    #[test]
    fn hwloc_bitmaps() {
        assert_eq!(
            CpuSet::parse_hwloc("0x00009fdb").unwrap().to_list_string(),
            "0-1,3-4,6-12,15"
        );
        assert_eq!(
            CpuSet::parse_hwloc("0x00000001,,0x00000002")
                .unwrap()
                .to_list_string(),
            "1,64"
        );
        assert!(CpuSet::parse_hwloc("0xf...f").unwrap().is_empty());
    }

    #[test]
    fn hex_mask_output() {
        assert_eq!(CpuSet::parse_list("0-4").unwrap().to_hex_mask(), "0x1f");
        assert_eq!(CpuSet::parse_list("8").unwrap().to_hex_mask(), "0x100");
        assert_eq!(CpuSet::new().to_hex_mask(), "0x0");
    }

    proptest! {
        #[test]
        fn parse_list_never_panics(s in "\\PC{0,40}") {
            let _ = CpuSet::parse_list(&s);
            let _ = CpuSet::parse_mask(&s);
            let _ = CpuSet::parse_hwloc(&s);
        }

        #[test]
        fn list_format_round_trips(v in proptest::collection::btree_set(0u32..2048, 0..64)) {
            let s: CpuSet = v.iter().copied().collect();
            prop_assert_eq!(CpuSet::parse_list(&s.to_list_string()).unwrap(), s.clone());
        }
    }
}
