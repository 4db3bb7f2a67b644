//! PostgreSQL (placeholder until the driver lands).

use super::{DbError, DbResult, ErrorKind, ServerAddr};

pub struct PgConnection;

impl PgConnection {
    pub fn connect(a: &ServerAddr) -> DbResult<Box<dyn super::Connection>> {
        Err(DbError::new(
            ErrorKind::Other,
            "",
            format!("PostgreSQL driver not built yet ({})", a.describe()),
        ))
    }
}
