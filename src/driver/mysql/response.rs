//! The response to a command read without its socket (the sans-I/O shape):
//! a [`Response`] is fed whatever bytes have arrived and consumes the
//! packets among them, up to the packet that ends the response. It never
//! reads or waits, so the blocking reader
//! ([`read_result`](super::MyConnection::read_result)) feeds it from its
//! reads, an event loop could from a ready socket, and the tests byte by
//! byte — the same code.
//!
//! A response is an OK packet, an ERR packet, or a result set (its column
//! count, the column definitions unless MariaDB's CACHE_METADATA skipped
//! them, an EOF without DEPRECATE_EOF, the rows, and the EOF or OK that
//! ends them), as many as SERVER_MORE_RESULTS_EXISTS announces; the
//! request for a file of a `LOAD DATA LOCAL` the caller did not start is
//! answered with an empty file. Rows of the text protocol (COM_QUERY) and
//! of the binary one (COM_STMT_EXECUTE) differ only when decoded.
//!
//! As the blocking reader did before it, it looks only at the packets
//! whose content matters. A row that is only counted passes by as it
//! streams (it never has to fit in the buffer, however long); a packet
//! looked at is parsed where it lies in the buffer, and nothing is
//! allocated unless rows are kept, the server reports an error, or a
//! packet wanted whole continues past 16 MiB.

use super::binary::{self, ColumnType};
use super::frame::{Frame, Frames, MAX_PAYLOAD};
use super::packet::{lenenc, lenenc_str, u16_at};
use super::{classify, SERVER_MORE_RESULTS_EXISTS};
use crate::driver::{DbError, Fetch, Outcome, Rows};

/// Where feeding a response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fed {
    /// `used` bytes were consumed; to go on, at least `need` bytes must be
    /// buffered after them (more than are: a packet not complete yet).
    More { used: usize, need: usize },
    /// `used` bytes were consumed, up to the server's request for a file
    /// (`LOAD DATA LOCAL`): send it an empty packet, the end of an empty
    /// file, numbered [`Response::next_seq`], then feed on.
    Reply { used: usize },
    /// The packet ending the response was consumed, the `used`-th byte its
    /// last: the response is complete ([`Response::end`]).
    Done { used: usize },
}

/// The stream is not the protocol any more: what did not parse. The
/// connection is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Malformed(pub &'static str);

/// What the caller keeps of the rows.
pub(super) enum Keep<'a> {
    /// Nothing: rows are counted (the hot path).
    Count,
    /// Every row of every result, as text (the driver's own queries, and
    /// text-protocol fetches).
    Text(&'a mut Rows),
    /// The binary rows of a prepared statement whose result has the
    /// `columns` its prepare or the last definitions sent gave: counted,
    /// and with a fetch, what it asks for of the first result's rows
    /// decoded by them.
    Binary {
        columns: &'a mut Vec<ColumnType>,
        fetch: Option<&'a mut Fetch>,
    },
}

/// One response as it arrives.
#[derive(Debug)]
pub(super) struct Response {
    frames: Frames,
    state: State,
}

/// What a response said so far, and what comes next.
#[derive(Debug)]
struct State {
    stage: Stage,
    outcome: Outcome,
    /// The server status of the last OK or EOF packet.
    status: Option<u16>,
    /// The ERR packet that ended the response.
    error: Option<DbError>,
    /// The current result set's number of columns.
    columns: u64,
    /// Results complete so far: only the first one's rows are kept as
    /// binary (a procedure's later results are counted).
    results: u32,
    /// An EOF packet follows the definitions and ends the rows, instead
    /// of an OK packet ending the rows.
    eof: bool,
    /// A result set's column count may be followed by a flag saying
    /// whether its definitions follow.
    cache_metadata: bool,
}

/// The next packet's place in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// A result's first packet: OK, ERR, a request for a file, or the
    /// column count of a result set.
    Start,
    /// Column definitions still to come.
    Definitions { left: u64 },
    /// The EOF packet after the definitions.
    DefinitionsEnd,
    /// Rows, up to the packet that ends them.
    Rows,
    /// The response is complete.
    Done,
}

/// What one packet did to the response.
enum Step {
    Next,
    Reply,
    Done,
}

impl Response {
    /// A response to come, under the capabilities in effect: whether
    /// DEPRECATE_EOF (OK packets instead of EOF packets) and MariaDB's
    /// CACHE_METADATA are.
    pub(super) fn new(deprecate_eof: bool, cache_metadata: bool) -> Response {
        Response {
            frames: Frames::default(),
            state: State {
                stage: Stage::Start,
                outcome: Outcome::default(),
                status: None,
                error: None,
                columns: 0,
                results: 0,
                eof: !deprecate_eof,
                cache_metadata,
            },
        }
    }

    /// Consumes the packets in `input` (and any part of a row it passes
    /// over), up to the end of the response or a request for a file. Rows
    /// are decoded into `keep` as it asks.
    #[inline]
    pub(super) fn feed(&mut self, input: &[u8], keep: &mut Keep<'_>) -> Result<Fed, Malformed> {
        let mut pos = 0;
        loop {
            if self.state.stage == Stage::Done {
                return Ok(Fed::Done { used: pos });
            }
            let state = &self.state;
            let frame = self
                .frames
                .next(&input[pos..], |first, len| state.whole(first, len, keep));
            let step = match frame {
                Frame::More { used, need } => {
                    return Ok(Fed::More {
                        used: pos + used,
                        need,
                    })
                }
                Frame::Passed { used, .. } => {
                    pos += used;
                    self.state.passed(keep)?
                }
                Frame::Whole { used, payload } => {
                    pos += used;
                    self.state.packet(payload, keep)?
                }
            };
            match step {
                Step::Next => {}
                Step::Reply => return Ok(Fed::Reply { used: pos }),
                Step::Done => return Ok(Fed::Done { used: pos }),
            }
        }
    }

    /// The sequence id that follows the last packet consumed.
    pub(super) fn next_seq(&self) -> u8 {
        self.frames.next_seq()
    }

    /// The server status the last OK or EOF packet gave (None before one).
    pub(super) fn status(&self) -> Option<u16> {
        self.state.status
    }

    /// The complete response: what it did, or the error that ended it.
    pub(super) fn end(self) -> Result<Outcome, DbError> {
        self.state.error.map_or(Ok(self.state.outcome), Err)
    }
}

impl State {
    /// Whether a packet is looked at whole, from its first byte and its
    /// first packet's length; the others pass by.
    #[inline]
    fn whole(&self, first: Option<u8>, len: usize, keep: &Keep) -> bool {
        match self.stage {
            Stage::Definitions { .. } => self.keeps_definitions(keep),
            Stage::DefinitionsEnd => false,
            Stage::Rows => match first {
                // The end of the rows; a row starts with 0xFE only if it
                // is 16 MiB or longer.
                Some(0xFE) if len < MAX_PAYLOAD => true,
                Some(0xFF) => true,
                _ => match keep {
                    Keep::Count => false,
                    Keep::Text(_) => true,
                    Keep::Binary { fetch, .. } => {
                        self.results == 0 && fetch.as_ref().is_some_and(|f| f.wants_row())
                    }
                },
            },
            Stage::Start | Stage::Done => true,
        }
    }

    /// Whether this result's column definitions become the statement's
    /// (a procedure's later results are not its): when its rows are
    /// decoded by them, and with CACHE_METADATA always, because the server
    /// sends changed definitions once and a later fetch without them must
    /// decode by them. Without it every execution brings them, so an
    /// execution that only counts its rows passes them by.
    fn keeps_definitions(&self, keep: &Keep) -> bool {
        match keep {
            Keep::Binary { fetch, .. } => {
                self.results == 0 && (fetch.is_some() || self.cache_metadata)
            }
            _ => false,
        }
    }

    /// A packet passed over: a row counted, a definition or EOF skipped.
    #[inline]
    fn passed(&mut self, keep: &Keep) -> Result<Step, Malformed> {
        match self.stage {
            Stage::Rows => self.outcome.rows += 1,
            Stage::Definitions { left } => self.definition_read(left, keep)?,
            Stage::DefinitionsEnd => self.rows_begin(keep)?,
            // Never passed over: always looked at whole.
            Stage::Start | Stage::Done => {}
        }
        Ok(Step::Next)
    }

    /// A packet looked at whole.
    #[inline]
    fn packet(&mut self, p: &[u8], keep: &mut Keep) -> Result<Step, Malformed> {
        match self.stage {
            Stage::Start => self.first_packet(p, keep),
            Stage::Rows => self.row(p, keep),
            Stage::Definitions { left } => {
                if let (true, Keep::Binary { columns, .. }) =
                    (self.keeps_definitions(keep), &mut *keep)
                {
                    let c = binary::column_type(p).ok_or(Malformed("bad column definition"))?;
                    columns.push(c);
                }
                self.definition_read(left, keep)?;
                Ok(Step::Next)
            }
            Stage::DefinitionsEnd | Stage::Done => self.passed(keep),
        }
    }

    /// A result's first packet.
    fn first_packet(&mut self, p: &[u8], keep: &mut Keep) -> Result<Step, Malformed> {
        match p.first() {
            Some(0x00) => {
                let (affected, status) = parse_ok(p).ok_or(Malformed("bad OK packet"))?;
                self.outcome.affected += affected;
                Ok(self.result_end(status))
            }
            Some(0xFF) => Ok(self.fail(p)),
            // A LOAD DATA LOCAL the caller did not start (e.g. through
            // execute_sql): it gets an empty file; OK or ERR follows.
            Some(0xFB) => Ok(Step::Reply),
            None => Err(Malformed("empty packet")),
            Some(_) => {
                let (columns, definitions) =
                    self.result_header(p).ok_or(Malformed("bad column count"))?;
                self.columns = columns;
                if !definitions {
                    if self.eof {
                        self.stage = Stage::DefinitionsEnd;
                    } else {
                        self.rows_begin(keep)?;
                    }
                    return Ok(Step::Next);
                }
                if let (true, Keep::Binary { columns, .. }) =
                    (self.keeps_definitions(keep), &mut *keep)
                {
                    columns.clear();
                }
                if columns == 0 {
                    self.rows_begin(keep)?;
                } else {
                    self.stage = Stage::Definitions { left: columns };
                }
                Ok(Step::Next)
            }
        }
    }

    /// A result set's first packet: its number of columns, and whether
    /// their definitions follow. With CACHE_METADATA a flag follows the
    /// count: 0 means the server skipped the definitions (unchanged since
    /// the statement's prepare or last execution).
    fn result_header(&self, p: &[u8]) -> Option<(u64, bool)> {
        let mut pos = 0;
        let columns = lenenc(p, &mut pos)?;
        let flag = p.get(pos).copied();
        Some((columns, !self.cache_metadata || flag.is_none_or(|f| f != 0)))
    }

    /// One column definition read, of `left` before it.
    fn definition_read(&mut self, left: u64, keep: &Keep) -> Result<(), Malformed> {
        if left > 1 {
            self.stage = Stage::Definitions { left: left - 1 };
        } else if self.eof {
            self.stage = Stage::DefinitionsEnd;
        } else {
            self.rows_begin(keep)?;
        }
        Ok(())
    }

    /// The rows begin: binary rows fetched decode by the statement's
    /// columns, which must be the result's.
    fn rows_begin(&mut self, keep: &Keep) -> Result<(), Malformed> {
        if let Keep::Binary {
            columns,
            fetch: Some(_),
        } = keep
        {
            if self.results == 0 && columns.len() as u64 != self.columns {
                return Err(Malformed(
                    "a result with other columns than the statement's",
                ));
            }
        }
        self.stage = Stage::Rows;
        Ok(())
    }

    /// A row, or the packet that ends the rows (EOF, or with DEPRECATE_EOF
    /// an OK packet with the 0xFE header; its counts are not the
    /// statement's), or an ERR.
    #[inline]
    fn row(&mut self, p: &[u8], keep: &mut Keep) -> Result<Step, Malformed> {
        match p.first() {
            Some(0xFE) if p.len() < MAX_PAYLOAD => {
                let status = match self.eof {
                    true => u16_at(p, 3),
                    false => parse_ok(p).map_or(0, |(_, s)| s),
                };
                self.outcome.result_set = true;
                return Ok(self.result_end(status));
            }
            Some(0xFF) => return Ok(self.fail(p)),
            _ => {}
        }
        self.outcome.rows += 1;
        match keep {
            Keep::Count => {}
            Keep::Text(rows) => {
                let row = decode_text_row(p, self.columns).ok_or(Malformed("bad row"))?;
                rows.push(row);
            }
            Keep::Binary {
                columns,
                fetch: Some(fetch),
            } if self.results == 0 => {
                binary::push_row(p, columns, fetch).ok_or(Malformed("bad binary row"))?;
            }
            Keep::Binary { .. } => {}
        }
        Ok(Step::Next)
    }

    /// A result ended with `status`: the response goes on if the server
    /// announced more results.
    fn result_end(&mut self, status: u16) -> Step {
        self.status = Some(status);
        self.results += 1;
        if status & SERVER_MORE_RESULTS_EXISTS != 0 {
            self.stage = Stage::Start;
            return Step::Next;
        }
        self.stage = Stage::Done;
        Step::Done
    }

    /// An ERR packet, which ends the response.
    #[cold]
    fn fail(&mut self, p: &[u8]) -> Step {
        self.error = Some(parse_err(p));
        self.stage = Stage::Done;
        Step::Done
    }
}

/// Affected rows and status flags of an OK packet (header 0x00 or 0xFE).
#[inline]
pub(super) fn parse_ok(p: &[u8]) -> Option<(u64, u16)> {
    let mut pos = 1;
    let affected = lenenc(p, &mut pos)?;
    lenenc(p, &mut pos)?; // last insert id
    Some((affected, u16_at(p, pos)))
}

/// An ERR packet: error number, `#` and SQLSTATE (protocol 4.1), message.
pub(super) fn parse_err(p: &[u8]) -> DbError {
    let code = u16_at(p, 1);
    let message = match p.get(3) {
        Some(b'#') => p.get(9..).unwrap_or(&[]),
        _ => p.get(3..).unwrap_or(&[]),
    };
    DbError::new(
        classify(code),
        code.to_string(),
        String::from_utf8_lossy(message).into_owned(),
    )
}

/// A text-protocol row's values as strings.
pub(super) fn decode_text_row(p: &[u8], columns: u64) -> Option<Vec<Option<String>>> {
    let mut pos = 0;
    (0..columns)
        .map(|_| {
            lenenc_str(p, &mut pos).map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .collect()
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
