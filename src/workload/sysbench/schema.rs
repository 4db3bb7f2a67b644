//! The `sbtestN` tables shared by the family: DDL per dialect, the
//! deterministic row generator, and prepare / cleanup / check.
//!
//! The table is sysbench 1.0.20's (`oltp_common.lua`, `create_table`):
//!
//! ```text
//! CREATE TABLE sbtestN(
//!   id <id type>,
//!   k INTEGER DEFAULT '0' NOT NULL,
//!   c CHAR(120) DEFAULT '' NOT NULL,
//!   pad CHAR(60) DEFAULT '' NOT NULL,
//!   PRIMARY KEY (id)            -- KEY xid (id) with --secondary
//! ) <engine> <create-table-options>
//! ```
//!
//! loaded with `--table-size` rows (id 1..N, `k` from `--rand-type` over
//! [1, N], `c` and `pad` from digit templates), then `CREATE INDEX k_N ON
//! sbtestN(k)` unless `--create-secondary=off`.

use anyhow::Context as _;

use crate::driver::{Connection, Dialect, Value};
use crate::rand::dist::Dist;
use crate::rand::RandConfig;
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::loader::{self, RowSource, TablePlan};
use crate::workload::{Connector, OptionValues};

pub use crate::workload::loader::{check_tables, drop_tables, ensure_absent, usage};

/// Template of `c`: ten groups of 11 random digits joined by dashes (119
/// characters; the column is CHAR(120)).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-\
                              ###########-###########-###########-###########-###########";

/// Template of `pad`: five groups of 11 random digits (59 characters; the
/// column is CHAR(60)).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// Mixed into the seed of the data generator, so that the loaded data and a
/// client's draws never come from the same stream.
const LOAD_SALT: u64 = 0x6c6f_6164_0000_0000;

/// `sbtest{n}`, the name sysbench gives table number `n` (from 1).
pub fn table_name(n: u32) -> String {
    format!("sbtest{n}")
}

/// Renders statement text written with `?` placeholders for `dialect`:
/// unchanged for SQLite and MySQL, `$1, $2, …` for PostgreSQL.
pub fn render(dialect: Dialect, sql: &str) -> String {
    if dialect != Dialect::Postgres {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Appends the non-empty ones of `engine` and `options` to a CREATE TABLE.
pub fn table_tail(mut sql: String, engine: &str, options: &str) -> String {
    for part in [engine, options.trim()] {
        if !part.is_empty() {
            sql.push(' ');
            sql.push_str(part);
        }
    }
    sql
}

/// How the sbtest tables are laid out and filled, from the options every
/// table-creating member of the family shares.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The workload's name, for the commands named in error messages.
    pub workload: &'static str,
    pub dialect: Dialect,
    /// Tables sbtest{offset+1}..=sbtest{offset+tables}.
    pub tables: u32,
    /// `--table-offset`: lets several instances (or dbsweep processes) use
    /// disjoint table sets.
    pub offset: u32,
    /// `--table-size`: the id range the clients draw from.
    pub table_size: u32,
    /// Rows `prepare` loads per table: `table_size`, except 0 for
    /// oltp_insert with `--auto-inc=off` (as sysbench: its generated ids
    /// could collide with preloaded ones).
    pub load_rows: u32,
    pub auto_inc: bool,
    /// The id index is a plain secondary index instead of the primary key.
    pub secondary: bool,
    /// Create the `k_N` index after loading.
    pub create_secondary: bool,
    /// Appended to CREATE TABLE.
    pub table_options: String,
    /// MySQL's storage engine.
    pub engine: String,
    /// Whether the workload takes `--tables`, for the hint in messages.
    pub takes_tables: bool,
    /// Seed and id distribution of the data (`k`).
    pub rand: RandConfig,
}

impl Schema {
    /// Reads the common options; `tables` is `None` for workloads without a
    /// `--tables` option (they use sbtest1 only).
    pub fn from_options(
        workload: &'static str,
        o: &OptionValues,
        dialect: Dialect,
        rand: RandConfig,
        tables: Option<u32>,
    ) -> anyhow::Result<Schema> {
        let table_size = o.u32("table-size");
        if table_size == 0 {
            return Err(usage(format!(
                "--table-size must be at least 1 for {workload}: its statements pick rows from 1..table-size"
            )));
        }
        if tables == Some(0) {
            return Err(usage("--tables must be at least 1".to_string()));
        }
        Ok(Schema {
            workload,
            dialect,
            tables: tables.unwrap_or(1),
            offset: o.u32("table-offset"),
            table_size,
            load_rows: table_size,
            auto_inc: o.bool("auto-inc"),
            secondary: o.bool("secondary"),
            create_secondary: o.bool("create-secondary"),
            table_options: o.str("create-table-options").to_string(),
            engine: o.str("mysql-storage-engine").to_string(),
            takes_tables: tables.is_some(),
            rand,
        })
    }

    /// The numbers of the tables, in order: sbtest{n} for each.
    pub fn table_numbers(&self) -> std::ops::RangeInclusive<u32> {
        self.offset + 1..=self.offset + self.tables
    }

    /// The names of every table, in order.
    pub fn table_names(&self) -> Vec<String> {
        self.table_numbers().map(table_name).collect()
    }

    /// CREATE TABLE for table `n`, as sysbench writes it.
    pub fn create_table_sql(&self, n: u32) -> String {
        self.table_sql(n, true)
    }

    /// CREATE TABLE for table `n`, with or without its id index (primary
    /// key or `KEY xid`) when that is a clause of CREATE TABLE.
    fn table_sql(&self, n: u32, id_index: bool) -> String {
        let id_def = match (self.dialect, self.auto_inc) {
            (Dialect::Mysql, true) => "INTEGER NOT NULL AUTO_INCREMENT",
            (Dialect::Postgres, true) => "SERIAL",
            // SQLite: a column declared exactly INTEGER with a one-column
            // PRIMARY KEY constraint is the rowid, which the database assigns
            // when an INSERT omits it (max(rowid) + 1). That is auto-increment
            // without AUTOINCREMENT, whose extra sqlite_sequence write per
            // insert would only add a never-reuse guarantee that no workload
            // here depends on.
            _ => "INTEGER NOT NULL",
        };
        let id_index = match (self.secondary, self.dialect) {
            _ if !id_index => "",
            (false, _) => ",\n  PRIMARY KEY (id)",
            (true, Dialect::Mysql) => ",\n  KEY xid (id)",
            // PostgreSQL and SQLite have no inline KEY clause: the index is
            // created after loading (see `after_load_sql`).
            (true, _) => "",
        };
        let engine = match self.dialect {
            Dialect::Mysql => format!("/*! ENGINE = {} */", self.engine),
            _ => String::new(),
        };
        let body = format!(
            "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{id_index}\n)"
        );
        table_tail(body, &engine, &self.table_options)
    }

    /// Statements to run on table `n` once its rows are in, in order, as
    /// sysbench does after loading the table created by
    /// [`Schema::create_table_sql`].
    pub fn after_load_sql(&self, n: u32) -> Vec<String> {
        let mut out = Vec::new();
        if self.secondary && self.dialect != Dialect::Mysql {
            out.push(self.xid_index_sql(n));
        }
        if self.dialect == Dialect::Postgres && self.auto_inc {
            out.push(self.setval_sql(n));
        }
        if self.create_secondary {
            out.push(self.k_index_sql(n));
        }
        out
    }

    /// The id index of `--secondary` where CREATE TABLE cannot declare it.
    fn xid_index_sql(&self, n: u32) -> String {
        format!("CREATE INDEX xid_{n} ON sbtest{n}(id)")
    }

    /// The secondary index on `k`.
    fn k_index_sql(&self, n: u32) -> String {
        format!("CREATE INDEX k_{n} ON sbtest{n}(k)")
    }

    /// PostgreSQL: rows were loaded with explicit ids, which the SERIAL
    /// sequence does not see; this moves it past them so that inserts
    /// without an id get fresh ones (MySQL and SQLite do this by themselves).
    fn setval_sql(&self, n: u32) -> String {
        format!(
            "SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {}, false)",
            u64::from(self.load_rows) + 1
        )
    }

    /// How `prepare` builds table `n`: the CREATE TABLE its rows are loaded
    /// into, the index builds that follow, and the statements that finish
    /// it.
    ///
    /// MySQL and SQLite load into the final table (InnoDB and a rowid table
    /// are clustered on the id: its index is the table) and index `k`
    /// afterwards, as sysbench does. PostgreSQL, as `pgbench -i`, loads a
    /// heap without any index and builds the id index afterwards, in one
    /// sorted pass instead of a B-tree insertion per row; the primary key is
    /// then attached to that unique index (`ADD CONSTRAINT … PRIMARY KEY
    /// USING INDEX`, instant because id is already NOT NULL), which leaves
    /// exactly the table sysbench creates, `sbtestN_pkey` included.
    pub fn plan(&self, n: u32) -> TablePlan {
        if self.dialect != Dialect::Postgres {
            return TablePlan {
                name: table_name(n),
                create: self.create_table_sql(n),
                columns: COLUMNS.to_vec(),
                rows: self.load_rows,
                indexes: self.after_load_sql(n),
                finish: Vec::new(),
            };
        }
        let mut indexes = Vec::new();
        let mut finish = Vec::new();
        if self.secondary {
            indexes.push(self.xid_index_sql(n));
        } else {
            indexes.push(format!(
                "CREATE UNIQUE INDEX sbtest{n}_pkey ON sbtest{n}(id)"
            ));
            finish.push(format!(
                "ALTER TABLE sbtest{n} ADD CONSTRAINT sbtest{n}_pkey PRIMARY KEY USING INDEX sbtest{n}_pkey"
            ));
        }
        if self.create_secondary {
            indexes.push(self.k_index_sql(n));
        }
        if self.auto_inc {
            finish.push(self.setval_sql(n));
        }
        TablePlan {
            name: table_name(n),
            create: self.table_sql(n, false),
            columns: COLUMNS.to_vec(),
            rows: self.load_rows,
            indexes,
            finish,
        }
    }

    /// How many connections `prepare` loads over (see [`loader::loaders`]).
    pub fn loaders(&self, threads: usize) -> usize {
        loader::loaders(self.dialect, threads)
    }

    /// Creates and loads every table with the shared loader (see
    /// [`loader::load`]): each table's id range is cut into chunks that
    /// several connections take from one queue, then its index builds run,
    /// then its finishing statements. Every row is a function of the seed,
    /// the table and its id (see [`RowGen`]). Refuses to start if any table
    /// exists, and drops what it created if it fails, so that nothing is
    /// left half-written.
    pub fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare the tables")?;
        let names = self.table_names();
        ensure_absent(first.as_mut(), &names, self.workload, self.hint())?;
        let plans: Vec<TablePlan> = self.table_numbers().map(|n| self.plan(n)).collect();
        let label = match (names.first(), plans.len()) {
            (Some(a), n) if n > 1 => format!("{a}..{}", self.offset + self.tables),
            _ => names.join(""),
        };
        loader::load(
            first.as_mut(),
            connect,
            &plans,
            self.loaders(threads),
            self,
            progress,
            &label,
        )
    }

    /// Drops every table (`DROP TABLE IF EXISTS`).
    pub fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &self.table_names())
    }

    /// Checks that every table exists and, if `need_rows`, has rows.
    pub fn check(&self, conn: &mut dyn Connection, need_rows: bool) -> anyhow::Result<()> {
        check_tables(
            conn,
            &self.table_names(),
            self.workload,
            self.hint(),
            need_rows,
        )
    }

    /// Which options must match between prepare and run, for messages.
    fn hint(&self) -> &'static str {
        if self.takes_tables {
            "with the same --db and --tables"
        } else {
            "with the same --db"
        }
    }
}

/// The columns every sbtest row fills, in order.
const COLUMNS: [&str; 4] = ["id", "k", "c", "pad"];

impl RowSource for Schema {
    fn rows(&self, table: usize, first: u32, last: u32) -> loader::Rows<'_> {
        let number = self.offset + 1 + table as u32;
        let mut gen = RowGen::range(&self.rand, number, first, last, self.table_size);
        Box::new(move |row| gen.next_row(row))
    }
}

/// Generates sbtest rows as sysbench's `create_table` does: ids in order,
/// `k` from the configured distribution over [1, table_size], `c` and `pad`
/// from their templates.
///
/// Each row is a function of the seed, the table number and its id alone:
/// its values come from a random stream of its own, seeded with the id
/// ([`Rng::for_client`] over a per-table seed). So any id range can be
/// generated on its own and parallel loaders produce exactly the rows one
/// loader would. The digits of `c` and `pad` are drawn eleven at a time
/// from one 64-bit number (see [`DigitTemplate`]).
pub struct RowGen {
    /// Seed of the table's rows; row `id` draws from `for_client(seed, id)`.
    seed: u64,
    c: DigitTemplate,
    pad: DigitTemplate,
    dist: Dist,
    /// The next id to generate.
    next: u64,
    /// The last id to generate.
    last: u64,
    table_size: u32,
}

impl RowGen {
    /// Rows 1..=rows of table `table`.
    #[cfg(test)]
    pub fn new(rand: &RandConfig, table: u32, rows: u32, table_size: u32) -> RowGen {
        RowGen::range(rand, table, 1, rows, table_size)
    }

    /// Rows `first..=last` of table `table` (none if `last < first`).
    pub fn range(rand: &RandConfig, table: u32, first: u32, last: u32, table_size: u32) -> RowGen {
        RowGen {
            seed: Rng::new(rand.seed ^ LOAD_SALT ^ u64::from(table)).next_u64(),
            c: DigitTemplate::new(C_TEMPLATE),
            pad: DigitTemplate::new(PAD_TEMPLATE),
            dist: Dist::new(rand.kind, rand.params),
            next: u64::from(first),
            last: u64::from(last),
            table_size,
        }
    }

    /// Appends the next row's (id, k, c, pad) to `row`; false once all rows
    /// have been produced.
    pub fn next_row(&mut self, row: &mut Vec<Value>) -> bool {
        if self.next > self.last {
            return false;
        }
        let id = self.next;
        self.next += 1;
        let mut rng = Rng::for_client(self.seed, id);
        let k = self.dist.draw(&mut rng, 1, self.table_size);
        let mut c = String::new();
        self.c.fill(&mut rng, &mut c);
        let mut pad = String::new();
        self.pad.fill(&mut rng, &mut pad);
        row.push(Value::Int(id as i64));
        row.push(Value::Int(i64::from(k)));
        row.push(Value::Text(c));
        row.push(Value::Text(pad));
        true
    }
}

/// Most digits drawn from one 64-bit random number by [`DigitTemplate`]:
/// eleven digits are `floor(x · 10^11 / 2^64)`, uniform over [0, 10^11) to
/// within 10^11 / 2^64 (5e-9), far below what any count of rows could
/// detect.
const DIGITS_PER_DRAW: usize = 11;

/// "00", "01", … "99", for writing digits two at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// 10^n for n in 0..=[`DIGITS_PER_DRAW`].
const POW10: [u64; DIGITS_PER_DRAW + 1] = {
    let mut p = [1u64; DIGITS_PER_DRAW + 1];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// Writes `v` (below 10^out.len()) as `out.len()` decimal digits,
/// zero-padded. Eleven digits, sysbench's groups, take a straight path in
/// two independent halves (five and six digits) written two digits at a
/// time: a loop of divisions would be most of the row generator's cost.
#[inline]
fn put_digits(out: &mut [u8], v: u64) {
    let pair = |out: &mut [u8], at: usize, v: u32| {
        let p = v as usize * 2;
        out[at..at + 2].copy_from_slice(&DIGIT_PAIRS[p..p + 2]);
    };
    if out.len() == 11 {
        let (hi, lo) = ((v / 1_000_000) as u32, (v % 1_000_000) as u32);
        out[0] = b'0' + (hi / 10_000) as u8;
        pair(out, 1, hi / 100 % 100);
        pair(out, 3, hi % 100);
        pair(out, 5, lo / 10_000);
        pair(out, 7, lo / 100 % 100);
        pair(out, 9, lo % 100);
        return;
    }
    let mut v = v;
    for d in out.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// A template of digits (`#`) and literal ASCII characters, filled as
/// [`Rng::fill_template`] fills it but at one random number `x` per run of
/// up to [`DIGITS_PER_DRAW`] digits instead of one per digit: a run of `n`
/// digits is `floor(x · 10^n / 2^64)`, zero-padded. Its digits are those
/// that taking the integer part of ten times the fraction `x / 2^64` again
/// and again would give, at a fraction of the cost. The row generator's
/// cost competes with the server for the CPUs when both run on one
/// machine, so the runs are found once, not at every row.
#[derive(Debug, Clone)]
pub struct DigitTemplate {
    text: &'static str,
    /// Where each run of digits starts, and its length (1..=11).
    runs: Vec<(usize, usize)>,
}

impl DigitTemplate {
    pub fn new(text: &'static str) -> DigitTemplate {
        debug_assert!(text.is_ascii() && !text.contains('@'));
        let t = text.as_bytes();
        let mut runs = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if t[i] != b'#' {
                i += 1;
                continue;
            }
            let n = t[i..]
                .iter()
                .take(DIGITS_PER_DRAW)
                .take_while(|&&b| b == b'#')
                .count();
            runs.push((i, n));
            i += n;
        }
        DigitTemplate { text, runs }
    }

    /// Replaces `out` with the template filled from `rng`, reusing its
    /// buffer.
    pub fn fill(&self, rng: &mut Rng, out: &mut String) {
        let mut buf = std::mem::take(out).into_bytes();
        buf.clear();
        buf.extend_from_slice(self.text.as_bytes());
        for &(at, n) in &self.runs {
            let v = ((u128::from(rng.next_u64()) * u128::from(POW10[n])) >> 64) as u64;
            put_digits(&mut buf[at..at + n], v);
        }
        *out = String::from_utf8(buf).expect("the template and the digits are ASCII");
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
