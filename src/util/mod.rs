//! Small things every layer may use: calendar dates of Unix times
//! ([`civil`]) and the progress of long operations ([`progress`]).

pub mod civil;
pub mod progress;
