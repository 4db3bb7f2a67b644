//! Super Smack's workloads: seed 000's Member / Record / Result tables and
//! its three tests as built-in workloads ([`builtin`]).

pub mod builtin;
