//! The two kinds of CH-benCHmark client: an analytical stream, which runs
//! the 22 queries one after another in its row of TPC-H's Appendix A
//! order and starts over (the next row) until the run ends, and a
//! transactional client, which is one TPC-C terminal running its
//! transactions back to back on its own connection.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::{Fetch, StmtId};
use crate::workload::tpcc::terminal::{Script as TpccScript, Terminals};
use crate::workload::tpch::ORDERS;
use crate::workload::{ClientScript, Op};

/// One analytical stream.
pub struct Stream {
    /// Statement id of Q1 (Q`n` is `first + n - 1`).
    first: StmtId,
    /// Transaction type index of Q1.
    first_type: u16,
    /// The stream's number: its first row of Appendix A.
    row: usize,
    pos: usize,
    query: u8,
    sent: bool,
}

impl Stream {
    pub fn new(first: StmtId, first_type: u16, stream: usize) -> Stream {
        let row = stream % ORDERS.len();
        Stream {
            first,
            first_type,
            row,
            pos: 0,
            query: ORDERS[row][0],
            sent: false,
        }
    }
}

impl ClientScript for Stream {
    fn start(&mut self) {
        self.query = ORDERS[self.row][self.pos];
        self.sent = false;
    }

    fn next(&mut self) -> Option<Op<'_>> {
        if std::mem::replace(&mut self.sent, true) {
            return None;
        }
        Some(Op::Exec(self.first + usize::from(self.query) - 1, &[]))
    }

    fn kind(&self) -> Option<u16> {
        Some(self.first_type + u16::from(self.query) - 1)
    }

    fn end(&mut self, _done: bool) {
        // Completed or failed (a timeout), the stream goes on.
        self.pos += 1;
        if self.pos == ORDERS[self.row].len() {
            self.pos = 0;
            self.row = (self.row + 1) % ORDERS.len();
        }
    }
}

/// One TPC-C terminal on a connection of its own: TPC-C's script, told
/// its terminal at every transaction (no pacing names it).
pub struct Terminal {
    inner: TpccScript,
}

impl Terminal {
    pub fn new(terminals: Arc<Terminals>, terminal: u32) -> Terminal {
        Terminal {
            inner: TpccScript::for_terminal(terminals, terminal),
        }
    }
}

impl ClientScript for Terminal {
    fn start(&mut self) {
        self.inner.start();
    }

    fn next(&mut self) -> Option<Op<'_>> {
        self.inner.next()
    }

    fn kind(&self) -> Option<u16> {
        self.inner.kind()
    }

    fn end(&mut self, done: bool) {
        self.inner.end(done);
    }

    fn pause(&mut self) -> Option<Duration> {
        self.inner.pause()
    }

    fn fetch_buffer(&mut self) -> Option<&mut Fetch> {
        self.inner.fetch_buffer()
    }

    fn deferred(&mut self) -> bool {
        self.inner.deferred()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_runs_its_rows_order_and_goes_on_to_the_next_row() {
        let mut s = Stream::new(40, 6, 1);
        let mut seen = Vec::new();
        for _ in 0..23 {
            s.start();
            let Some(Op::Exec(id, params)) = s.next() else {
                panic!("one statement per query");
            };
            assert!(params.is_empty());
            assert!(s.next().is_none());
            seen.push((id - 40 + 1) as u8);
            assert_eq!(s.kind(), Some(6 + u16::from(*seen.last().unwrap()) - 1));
            s.end(true);
        }
        assert_eq!(seen[..22], ORDERS[1]);
        assert_eq!(seen[22], ORDERS[2][0]);
    }
}
