//! Byte sizes as people write them: `200MB`, `1GiB`, `512k`, `4096` (the one
//! parser, shared with every setting: `scalescope_model::value`).

pub use scalescope_model::value::{parse_bytes, Bytes};
