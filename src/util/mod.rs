//! Small things every layer may use: the engine's clock ([`clock`]), the
//! event loops' epoll wait ([`epoll`]) and the timer it falls back on
//! ([`alarm`]),
//! calendar dates of Unix times ([`civil`]), durations as people write them ([`duration`]), the
//! descriptor limit ([`fds`]), the
//! directory of a path ([`paths`]), a tiny HTTP server for pages that are
//! read, such as the live feed's ([`http`]), the progress of long operations
//! ([`progress`]), a real-time priority for threads that keep time
//! ([`priority`]), passwords out of kept text ([`secrets`]) and latencies
//! in milliseconds ([`units`]).

pub mod alarm;
pub mod civil;
pub mod clock;
pub mod duration;
pub mod epoll;
pub mod fds;
pub mod http;
pub mod paths;
pub mod priority;
pub mod progress;
pub mod secrets;
pub mod units;
