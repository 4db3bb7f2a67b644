//! The blocking reader of responses: it reads the socket into the buffer
//! whenever a [`Response`] (response.rs, which never touches the socket)
//! asks for more, and feeds it what arrived, until the response is
//! complete; and the commands whose answers it reads whole.

use super::response::{Fed, Keep, Malformed, Response};
use super::*;

impl MyConnection {
    /// Reads a command's response to its end: an OK packet, an ERR packet,
    /// or result sets (rows counted, or kept as `keep` asks), as many as
    /// the server announces with SERVER_MORE_RESULTS_EXISTS.
    #[inline]
    pub(super) fn read_result(&mut self, keep: &mut Keep<'_>) -> DbResult<Outcome> {
        let mut response = self.response();
        loop {
            match response.feed(self.io.buffered(), keep) {
                Ok(Fed::Done { used }) => {
                    self.io.consume(used);
                    break;
                }
                Ok(Fed::More { used, need }) => {
                    self.io.consume(used);
                    if let Err(e) = self.io.fill(need) {
                        return Err(self.lost(CR_SERVER_LOST, e));
                    }
                }
                Ok(Fed::Reply { used }) => {
                    self.reply(used, &response);
                    self.send()?;
                }
                Err(Malformed(what)) => return Err(self.malformed(what)),
            }
        }
        self.finish(response)
    }

    /// A response to come, under the capabilities in effect.
    #[inline]
    pub(super) fn response(&self) -> Response {
        Response::new(
            self.caps & CLIENT_DEPRECATE_EOF != 0,
            self.ext_caps & auth::MARIADB_CLIENT_CACHE_METADATA != 0,
        )
    }

    /// Consumes the `used` bytes up to the server's request for a file,
    /// and builds the empty packet that answers it (an empty file).
    pub(super) fn reply(&mut self, used: usize, response: &Response) {
        self.io.consume(used);
        self.io.set_seq(response.next_seq());
        self.io.begin_packet();
    }

    /// What a complete response did: its outcome or error, the server's
    /// status kept, the sequence ids continued.
    #[inline]
    pub(super) fn finish(&mut self, response: Response) -> DbResult<Outcome> {
        self.io.set_seq(response.next_seq());
        if let Some(status) = response.status() {
            self.status = status;
        }
        response.end().inspect_err(|e| {
            // The server is closing the session (shutdown, KILL).
            if e.kind == ErrorKind::ConnectionLost {
                self.broken = true;
            }
        })
    }

    /// Runs one SQL text and returns its rows as strings (NULL as None).
    /// For the driver's own bookkeeping queries, never the hot path.
    pub(super) fn query_rows(&mut self, sql: &str) -> DbResult<Rows> {
        self.encode_query(sql)?;
        self.send()?;
        let mut rows = Vec::new();
        self.read_result(&mut Keep::Text(&mut rows))?;
        Ok(rows)
    }

    /// Runs a statement without parameters through COM_QUERY.
    pub(super) fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.encode_query(sql)?;
        self.send()?;
        self.read_result(&mut Keep::Count)
    }

    /// Builds the COM_QUERY of a statement without parameters in the
    /// write buffer.
    pub(super) fn encode_query(&mut self, sql: &str) -> DbResult<()> {
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        Ok(())
    }
}
