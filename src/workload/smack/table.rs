//! Table blocks: make sure a table exists with enough rows before the run.
//!
//! As Super Smack does: when the table is missing, create it; when it has
//! fewer than `min_rows` rows, drop and re-create it; after creating, load
//! `data_file` (comma-separated, one row per line, columns in the order of
//! the `create` statement), generating the file first when it does not
//! exist. `gen-data …` is run built in ([`super::gen_data`]); any other
//! `gen_data_file` command runs through `sh -c` with its output going to the
//! file. Loading goes through the driver's bulk path (`LOAD DATA LOCAL`,
//! `COPY FROM STDIN`, batched inserts on SQLite), which works against
//! remote servers too.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::driver::{Connection, Value};
use crate::UsageError;

use super::gen_data::{self, GenDataCommand};

/// A table block, with its file paths resolved against the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    pub name: String,
    pub create: String,
    pub min_rows: u64,
    pub data_file: Option<PathBuf>,
    pub gen_data_file: Option<String>,
}

/// What [`ensure`] did, for the messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The table was there with at least `min_rows` rows.
    Ready(u64),
    /// Created (dropped first if it was too small) and loaded with N rows.
    Created { dropped: bool, loaded: u64 },
}

/// Makes `t` ready on `conn`; `log` receives Super Smack's progress lines.
pub fn ensure(
    t: &TableSpec,
    conn: &mut dyn Connection,
    seed: u64,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<Outcome> {
    let exists = conn
        .table_exists(&t.name)
        .map_err(|e| anyhow::anyhow!("checking table '{}': {e}", t.name))?;
    let mut dropped = false;
    if exists {
        let rows = conn
            .count_rows(&t.name)
            .map_err(|e| anyhow::anyhow!("counting the rows of '{}': {e}", t.name))?;
        if rows >= t.min_rows {
            return Ok(Outcome::Ready(rows));
        }
        log(format!(
            "Table '{}' has {rows} rows, fewer than min_rows {}: dropping and re-creating it",
            t.name, t.min_rows
        ));
        conn.execute_sql(&format!("drop table {}", t.name))
            .map_err(|e| anyhow::anyhow!("dropping table '{}': {e}", t.name))?;
        dropped = true;
    }
    let columns = columns(&t.create).map_err(|e| UsageError(format!("table '{}': {e}", t.name)))?;
    log(format!("Creating table '{}'", t.name));
    conn.execute_sql(&t.create).map_err(|e| {
        UsageError(format!(
            "table '{}': its create statement failed: {e}",
            t.name
        ))
    })?;
    let Some(file) = &t.data_file else {
        return Ok(Outcome::Created { dropped, loaded: 0 });
    };
    if !file.exists() {
        let Some(cmd) = &t.gen_data_file else {
            return Err(UsageError(format!(
                "table '{}': data file '{}' does not exist and the table block has no gen_data_file to make it: create the file, or pass --datadir DIR where it is",
                t.name,
                file.display()
            ))
            .into());
        };
        generate(cmd, file, seed, log).with_context(|| format!("table '{}'", t.name))?;
    }
    log(format!(
        "Loading data from file '{}' into table '{}'",
        file.display(),
        t.name
    ));
    let loaded = load(conn, &t.name, &columns, file)?;
    log(format!(
        "Table {} is now ready for the test ({loaded} rows)",
        t.name
    ));
    Ok(Outcome::Created { dropped, loaded })
}

/// Writes `file` with the gen_data_file command `cmd`.
pub fn generate(
    cmd: &str,
    file: &Path,
    seed: u64,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the data directory '{}'", dir.display()))?;
    }
    log(format!(
        "Populating data file '{}' with {} '{cmd}'",
        file.display(),
        if GenDataCommand::recognise(cmd).ok().flatten().is_some() {
            "built-in"
        } else {
            "shell command"
        }
    ));
    // Written under a temporary name and renamed, so an interrupted or
    // failed generation never leaves a partial file that a later run would
    // take as complete.
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        match GenDataCommand::recognise(cmd).map_err(UsageError)? {
            Some(g) => {
                let format = gen_data::Format::parse(&g.format).map_err(UsageError)?;
                let f = std::fs::File::create(&tmp)
                    .with_context(|| format!("cannot create '{}'", tmp.display()))?;
                let mut w = std::io::BufWriter::new(f);
                gen_data::generate(&format, g.rows, seed, &mut w)
                    .with_context(|| format!("writing '{}'", tmp.display()))?;
            }
            None => {
                let out = std::fs::File::create(&tmp)
                    .with_context(|| format!("cannot create '{}'", tmp.display()))?;
                let status = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(cmd)
                    .stdout(out)
                    .status()
                    .with_context(|| format!("cannot run sh -c '{cmd}'"))?;
                if !status.success() {
                    return Err(UsageError(format!(
                        "gen_data_file command '{cmd}' failed ({status}): fix the command or create '{}' yourself",
                        file.display()
                    ))
                    .into());
                }
            }
        }
        std::fs::rename(&tmp, file)
            .with_context(|| format!("cannot move '{}' to '{}'", tmp.display(), file.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Loads the comma-separated `file` into `table` through the bulk path.
fn load(
    conn: &mut dyn Connection,
    table: &str,
    columns: &[String],
    file: &Path,
) -> anyhow::Result<u64> {
    let f = std::fs::File::open(file)
        .with_context(|| format!("cannot open data file '{}'", file.display()))?;
    let mut lines = BufReader::with_capacity(256 * 1024, f).lines();
    let cols: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut line_no = 0u64;
    let mut bad: Option<anyhow::Error> = None;
    let n = conn
        .bulk_load(table, &cols, &mut |row| {
            row.clear();
            loop {
                line_no += 1;
                let line = match lines.next() {
                    None => return false,
                    Some(Err(e)) => {
                        bad = Some(anyhow::anyhow!("reading '{}': {e}", file.display()));
                        return false;
                    }
                    Some(Ok(l)) => l,
                };
                if line.is_empty() {
                    continue;
                }
                for field in line.split(',') {
                    row.push(Value::Text(field.to_string()));
                }
                if row.len() != cols.len() {
                    bad = Some(
                        UsageError(format!(
                            "{}:{line_no}: {} comma-separated fields, but table '{table}' has {} columns ({})",
                            file.display(),
                            row.len(),
                            cols.len(),
                            cols.join(", ")
                        ))
                        .into(),
                    );
                    return false;
                }
                return true;
            }
        })
        .map_err(|e| anyhow::anyhow!("loading '{}' into '{table}': {e}", file.display()))?;
    if let Some(e) = bad {
        return Err(e);
    }
    Ok(n)
}

/// The column names of a `CREATE TABLE name (…)` statement, in order:
/// the first word of each top-level element that is not a constraint.
pub fn columns(create: &str) -> Result<Vec<String>, String> {
    let open = create
        .find('(')
        .ok_or("the create statement has no column list in parentheses")?;
    let body = &create[open + 1..];
    let mut depth = 0i32;
    let mut elems = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut closed = false;
    for c in body.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            elems.last_mut().unwrap().push(c);
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                elems.last_mut().unwrap().push(c);
            }
            '(' => {
                depth += 1;
                elems.last_mut().unwrap().push(c);
            }
            ')' if depth == 0 => {
                closed = true;
                break;
            }
            ')' => {
                depth -= 1;
                elems.last_mut().unwrap().push(c);
            }
            ',' if depth == 0 => elems.push(String::new()),
            c => elems.last_mut().unwrap().push(c),
        }
    }
    if !closed {
        return Err("the create statement's column list has no closing ')'".into());
    }
    const CONSTRAINTS: &[&str] = &[
        "primary",
        "key",
        "index",
        "unique",
        "constraint",
        "foreign",
        "check",
        "fulltext",
        "spatial",
        "exclude",
    ];
    let mut cols = Vec::new();
    for e in &elems {
        let Some(first) = e.split_whitespace().next() else {
            continue;
        };
        if CONSTRAINTS.contains(&first.to_ascii_lowercase().as_str()) {
            continue;
        }
        cols.push(first.trim_matches(['`', '"']).to_string());
    }
    if cols.is_empty() {
        return Err("the create statement names no columns".into());
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::sqlite::SqliteConnection;

    #[test]
    fn columns_of_create_statements() {
        assert_eq!(
            columns("create table http_auth\n    (username char(25) not null primary key,\n     pass char(25),\n     uid integer not null,\n     gid integer not null\n    )").unwrap(),
            ["username", "pass", "uid", "gid"]
        );
        assert_eq!(
            columns("CREATE TABLE t (`a` decimal(10,2), \"b\" text default 'x,y', PRIMARY KEY (a), KEY k (b)) ENGINE=InnoDB").unwrap(),
            ["a", "b"]
        );
        assert!(columns("create table t")
            .unwrap_err()
            .contains("no column list"));
        assert!(columns("create table t (a int")
            .unwrap_err()
            .contains("no closing"));
    }

    fn spec(dir: &Path, min_rows: u64, gen: Option<&str>) -> TableSpec {
        TableSpec {
            name: "http_auth".into(),
            create: "create table http_auth (username char(25) not null primary key, pass char(25), uid integer not null, gid integer not null)".into(),
            min_rows,
            data_file: Some(dir.join("words.dat")),
            gen_data_file: gen.map(String::from),
        }
    }

    #[test]
    fn creates_generates_loads_and_reloads_when_too_small() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let mut conn = SqliteConnection::open(&db, &[]).unwrap();
        let gen = "gen-data -n 500 -f %12-12s%n,%25-25s,%n,%d";
        let t = spec(dir.path(), 500, Some(gen));
        let mut log = Vec::new();
        let o = ensure(&t, &mut conn, 1, &mut |s| log.push(s)).unwrap();
        assert_eq!(
            o,
            Outcome::Created {
                dropped: false,
                loaded: 500
            }
        );
        assert_eq!(conn.count_rows("http_auth").unwrap(), 500);
        assert!(
            log.iter().any(|l| l.contains("Populating data file")),
            "{log:?}"
        );
        let text = std::fs::read_to_string(dir.path().join("words.dat")).unwrap();
        assert_eq!(text.lines().count(), 500);
        // Enough rows: left alone.
        assert_eq!(
            ensure(&t, &mut conn, 1, &mut |_| {}).unwrap(),
            Outcome::Ready(500)
        );
        // Too few rows: dropped, re-created and reloaded from the file.
        conn.execute_sql("delete from http_auth where uid > 10")
            .unwrap();
        let o = ensure(&t, &mut conn, 1, &mut |_| {}).unwrap();
        assert_eq!(
            o,
            Outcome::Created {
                dropped: true,
                loaded: 500
            }
        );
    }

    #[test]
    fn shell_commands_and_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = SqliteConnection::open(&dir.path().join("t.db"), &[]).unwrap();
        let t = spec(dir.path(), 1, Some("printf 'a,b,1,2\\nc,d,3,4\\n'"));
        let o = ensure(&t, &mut conn, 1, &mut |_| {}).unwrap();
        assert_eq!(
            o,
            Outcome::Created {
                dropped: false,
                loaded: 2
            }
        );

        let dir = tempfile::tempdir().unwrap();
        let mut conn = SqliteConnection::open(&dir.path().join("t.db"), &[]).unwrap();
        std::fs::write(dir.path().join("words.dat"), "a,b,1,2\nc,d,3\n").unwrap();
        let e = ensure(&spec(dir.path(), 1, None), &mut conn, 1, &mut |_| {}).unwrap_err();
        assert!(e.to_string().ends_with("words.dat:2: 3 comma-separated fields, but table 'http_auth' has 4 columns (username, pass, uid, gid)"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let mut conn = SqliteConnection::open(&dir.path().join("t.db"), &[]).unwrap();
        let e = ensure(&spec(dir.path(), 1, None), &mut conn, 1, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("has no gen_data_file"), "{e}");

        let t = spec(dir.path(), 1, Some("exit 3"));
        let mut conn = SqliteConnection::open(&dir.path().join("t2.db"), &[]).unwrap();
        let e = ensure(&t, &mut conn, 1, &mut |_| {}).unwrap_err();
        assert!(format!("{e:#}").contains("failed"), "{e:#}");
        assert!(
            !dir.path().join("words.dat").exists(),
            "no partial file left"
        );
    }
}
