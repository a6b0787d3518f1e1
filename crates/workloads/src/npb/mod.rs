//! The NAS Parallel Benchmarks (NPB 3.4.1): EP, IS and FT, each verified against
//! the official values for its class, and NPB's random number generator that they
//! share.

pub mod ep;
pub mod ft;
pub mod is;
pub mod rand;
