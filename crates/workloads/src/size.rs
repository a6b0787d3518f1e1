//! Byte sizes as people write them: `200MB`, `1GiB`, `512k`, `4096` (the one
//! parser, shared with every setting: `scalescope_results::value`).

pub use scalescope_results::value::{parse_bytes, Bytes};
