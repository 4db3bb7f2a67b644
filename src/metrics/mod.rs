//! What the machine is and what it was doing: the description recorded with
//! every result (CPU model, cores, kernel). Per-interval OS and server
//! counters will live here too.

pub mod machine;
