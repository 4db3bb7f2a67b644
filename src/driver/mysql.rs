//! MySQL / MariaDB (placeholder until the driver lands).

use super::{DbError, DbResult, ErrorKind, ServerAddr};

pub struct MyConnection;

impl MyConnection {
    pub fn connect(a: &ServerAddr) -> DbResult<Box<dyn super::Connection>> {
        Err(DbError::new(
            ErrorKind::Other,
            "",
            format!("MySQL driver not built yet ({})", a.describe()),
        ))
    }
}
