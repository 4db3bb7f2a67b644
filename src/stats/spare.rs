//! The chunks histograms give back, kept for the next histogram of their
//! owner that needs one (`stats::histogram`'s "Memory"), and what a chunk is: a recorder's
//! shards reuse their tails' chunks instead of freeing and allocating
//! them every period.

/// Counters per chunk: one chunk covers one power of two.
pub(super) const CHUNK_LEN: usize = 1024;

/// One power of two's worth of counters.
pub(super) type Chunk = [u64; CHUNK_LEN];

/// A zeroed chunk. Only called off the hot path, the first time a power of
/// two is seen.
pub(super) fn new_chunk() -> Box<Chunk> {
    Box::new([0; CHUNK_LEN])
}

/// Periods a [`Spare`] remembers its takes for (see [`Spare::settle`]).
const SPARE_PERIODS: usize = 64;

/// Zeroed chunks that histograms gave back, for the next one that needs a
/// chunk (see "Memory" in `stats::histogram`). Its owner keeps it
/// beside the histograms it serves, under the same lock.
#[derive(Debug)]
pub struct Spare {
    chunks: Vec<Box<Chunk>>,
    /// Chunks allocated because none was spare.
    allocated: u64,
    /// Chunks taken in each of the last periods (a ring; `period` is the
    /// current one's slot).
    taken: [u32; SPARE_PERIODS],
    period: usize,
}

impl Default for Spare {
    fn default() -> Self {
        Spare {
            chunks: Vec::new(),
            allocated: 0,
            taken: [0; SPARE_PERIODS],
            period: 0,
        }
    }
}

impl Spare {
    pub fn new() -> Self {
        Self::default()
    }

    /// A zeroed chunk: a spare one, else a new one.
    pub(super) fn take(&mut self) -> Box<Chunk> {
        self.taken[self.period] = self.taken[self.period].saturating_add(1);
        self.chunks.pop().unwrap_or_else(|| {
            self.allocated += 1;
            new_chunk()
        })
    }

    /// Keeps `chunk` (zeroed) for the next [`Spare::take`].
    pub(super) fn give(&mut self, chunk: Box<Chunk>) {
        self.chunks.push(chunk);
    }

    /// Ends a period (the owner's collect): keeps no more chunks spare
    /// than the most taken in one of the last 64 periods, and frees the
    /// rest — a run's first seconds (cold caches, connections warming)
    /// spread its latencies over more powers of two than it will need
    /// again, while tails that recur within a minute find their chunks.
    pub fn settle(&mut self) {
        let keep = self.taken.iter().copied().max().unwrap_or(0) as usize;
        self.chunks.truncate(keep);
        self.period = (self.period + 1) % SPARE_PERIODS;
        self.taken[self.period] = 0;
    }

    /// Chunks allocated through this spare because it had none: what a
    /// settled owner should no longer add to.
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Heap bytes of the chunks held spare.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.len() * std::mem::size_of::<Chunk>()
    }
}
