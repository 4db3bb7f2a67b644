//! What the machine is and what it was doing: the description recorded with
//! every result (CPU model, cores, kernel) and the CPU this process uses.
//! Per-interval OS and server counters will live here too.
//!
//! - [`machine`]: the machine a result was measured on.
//! - [`cpu`]: usable CPUs and this process's own CPU time.

pub mod cpu;
pub mod machine;
pub mod proc;
