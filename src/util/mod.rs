//! Small things every layer may use: calendar dates of Unix times
//! ([`civil`]), durations as people write them ([`duration`]), the
//! directory of a path ([`paths`]) and the progress of long operations
//! ([`progress`]).

pub mod civil;
pub mod duration;
pub mod paths;
pub mod progress;
