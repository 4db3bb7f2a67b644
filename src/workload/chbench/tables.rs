//! CH-benCHmark's three tables beside TPC-C's nine (the paper's Figure 2):
//! REGION (5 rows), NATION (62) and SUPPLIER (10,000), their DDL per
//! dialect and their rows.
//!
//! The tables join TPC-C's by computed keys, not by columns: a stock
//! row's supplier is `(s_w_id × s_i_id) mod 10,000`, and a customer's
//! nation is the character code of the first letter of `c_state`. So
//! NATION's keys are the codes of the characters a state may begin with
//! — `0`–`9`, `A`–`Z`, `a`–`z` (48–57, 65–90, 97–122): 62 nations — and
//! SUPPLIER's keys are 0 to 9,999, every value the modulo gives (so every
//! stock row has its supplier).
//!
//! The names are the countries and regions the queries ask for
//! (Germany, Cambodia, Europe …) among others; comments, supplier names,
//! addresses and phone numbers are random a-strings and n-strings of
//! TPC-C's clause 4.3.2.2, drawn from the load's seed.

use crate::driver::{Connection, Dialect, Value};
use crate::rand::Rng;
use crate::workload::tpcc::random;

/// The three tables, in load order (a nation names its region, a
/// supplier its nation).
pub const TABLES: [&str; 3] = ["region", "nation", "supplier"];

/// Suppliers: the modulo of every supplier key.
pub const SUPPLIERS: u32 = 10_000;

/// The five regions, keys 1–5.
pub const REGIONS: [&str; 5] = ["Africa", "America", "Asia", "Australia", "Europe"];

/// The 62 nations in key order, with their regions' keys (see
/// [`nation_key`]).
pub const NATIONS: [(&str, u8); 62] = [
    ("Australia", 4),
    ("Belgium", 5),
    ("Cameroon", 1),
    ("Denmark", 5),
    ("Ecuador", 2),
    ("France", 5),
    ("Germany", 5),
    ("Hungary", 5),
    ("Italy", 5),
    ("Japan", 3),
    ("Kenya", 1),
    ("Lithuania", 5),
    ("Mexico", 2),
    ("Netherlands", 5),
    ("Oman", 1),
    ("Portugal", 5),
    ("Qatar", 1),
    ("Rwanda", 1),
    ("Serbia", 5),
    ("Togo", 1),
    ("United States", 2),
    ("Vietnam", 3),
    ("Singapore", 3),
    ("Cambodia", 3),
    ("Yemen", 1),
    ("Zimbabwe", 1),
    ("Argentina", 2),
    ("Bolivia", 2),
    ("Canada", 2),
    ("Dominican Republic", 2),
    ("Egypt", 1),
    ("Finland", 5),
    ("Ghana", 1),
    ("Haiti", 2),
    ("India", 3),
    ("Jamaica", 2),
    ("Kazakhstan", 3),
    ("Luxembourg", 5),
    ("Morocco", 1),
    ("Norway", 5),
    ("Poland", 5),
    ("Peru", 2),
    ("Nicaragua", 2),
    ("Romania", 5),
    ("South Africa", 1),
    ("Thailand", 3),
    ("United Kingdom", 5),
    ("Venezuela", 2),
    ("Liechtenstein", 5),
    ("Austria", 5),
    ("Laos", 3),
    ("Zambia", 1),
    ("Switzerland", 5),
    ("China", 3),
    ("Papua New Guinea", 4),
    ("East Timor", 4),
    ("Bulgaria", 5),
    ("Brazil", 2),
    ("Albania", 5),
    ("Andorra", 5),
    ("Belize", 2),
    ("Botswana", 1),
];

/// The key of nation number `i` (0–61): the character code of `0`–`9`,
/// `A`–`Z`, then `a`–`z`.
pub fn nation_key(i: usize) -> i64 {
    let c = match i {
        0..=9 => b'0' + i as u8,
        10..=35 => b'A' + (i - 10) as u8,
        _ => b'a' + (i - 36) as u8,
    };
    i64::from(c)
}

/// The CREATE TABLE of each table, with its primary key.
pub fn create(dialect: Dialect) -> [String; 3] {
    let engine = if dialect == Dialect::Mysql {
        " ENGINE=InnoDB"
    } else {
        ""
    };
    [
        format!(
            "CREATE TABLE region (r_regionkey INTEGER NOT NULL, r_name CHAR(55), \
             r_comment CHAR(152), PRIMARY KEY (r_regionkey)){engine}"
        ),
        format!(
            "CREATE TABLE nation (n_nationkey INTEGER NOT NULL, n_name CHAR(25), \
             n_regionkey INTEGER NOT NULL, n_comment CHAR(152), PRIMARY KEY (n_nationkey)){engine}"
        ),
        format!(
            "CREATE TABLE supplier (su_suppkey INTEGER NOT NULL, su_name CHAR(25), \
             su_address VARCHAR(40), su_nationkey INTEGER NOT NULL, su_phone CHAR(15), \
             su_acctbal DECIMAL(12,2), su_comment CHAR(100), PRIMARY KEY (su_suppkey)){engine}"
        ),
    ]
}

/// Creates and loads the three tables on `conn`, rows drawn from `seed`.
pub fn load(conn: &mut dyn Connection, dialect: Dialect, seed: u64) -> anyhow::Result<()> {
    for sql in create(dialect) {
        conn.execute_sql(&sql)?;
    }
    let mut rng = Rng::new(seed ^ 0x4348_4245_4e43_484d);
    let mut region = 0usize;
    conn.bulk_load(
        "region",
        &["r_regionkey", "r_name", "r_comment"],
        &mut |out: &mut Vec<Value>| {
            let Some(name) = REGIONS.get(region) else {
                return false;
            };
            region += 1;
            out.push(Value::Int(region as i64));
            out.push(Value::Text(name.to_string()));
            out.push(Value::Text(random::a_text(&mut rng, 31, 115)));
            true
        },
    )?;
    let mut nation = 0usize;
    conn.bulk_load(
        "nation",
        &["n_nationkey", "n_name", "n_regionkey", "n_comment"],
        &mut |out: &mut Vec<Value>| {
            let Some((name, r)) = NATIONS.get(nation) else {
                return false;
            };
            out.push(Value::Int(nation_key(nation)));
            out.push(Value::Text(name.to_string()));
            out.push(Value::Int(i64::from(*r)));
            out.push(Value::Text(random::a_text(&mut rng, 31, 114)));
            nation += 1;
            true
        },
    )?;
    let mut key = 0u32;
    conn.bulk_load(
        "supplier",
        &[
            "su_suppkey",
            "su_name",
            "su_address",
            "su_nationkey",
            "su_phone",
            "su_acctbal",
            "su_comment",
        ],
        &mut |out: &mut Vec<Value>| {
            if key == SUPPLIERS {
                return false;
            }
            out.push(Value::Int(i64::from(key)));
            out.push(Value::Text(random::a_text(&mut rng, 25, 25)));
            out.push(Value::Text(random::a_text(&mut rng, 20, 40)));
            let n = rng.uniform(0, NATIONS.len() as u32 - 1) as usize;
            out.push(Value::Int(nation_key(n)));
            let mut phone = String::with_capacity(15);
            random::n_string(&mut rng, 15, 15, &mut phone);
            out.push(Value::Text(phone));
            // TPC-H's S_ACCTBAL: -999.99 to 9,999.99.
            let cents = i64::from(rng.uniform(0, 1_099_998)) - 99_999;
            out.push(Value::Float(cents as f64 / 100.0));
            out.push(Value::Text(random::a_text(&mut rng, 51, 100)));
            key += 1;
            true
        },
    )?;
    // One table per ANALYZE: PostgreSQL takes a list only from 11 on.
    for t in ["region", "nation", "supplier"] {
        conn.execute_sql(&match dialect {
            Dialect::Postgres => format!("ANALYZE {t}"),
            Dialect::Mysql => format!("ANALYZE TABLE {t}"),
            Dialect::Sqlite => "ANALYZE".to_string(),
        })?;
        if dialect == Dialect::Sqlite {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nation_keys_are_the_codes_of_a_states_first_character() {
        assert_eq!(nation_key(0), i64::from(b'0'));
        assert_eq!(nation_key(10), i64::from(b'A'));
        assert_eq!(nation_key(35), i64::from(b'Z'));
        assert_eq!(nation_key(61), i64::from(b'z'));
        // The queries' nations and region are there.
        for name in ["Germany", "Cambodia"] {
            assert!(NATIONS.iter().any(|(n, _)| *n == name), "{name}");
        }
        assert!(REGIONS.contains(&"Europe"));
        // Customers' states begin with A–Z: Europe's nations are among
        // theirs, Germany is a supplier's only (keyed '6'), as in the
        // benchmark's reference data.
        assert!((10..36).any(|i| NATIONS[i].1 == 5));
        assert_eq!(nation_key(6), i64::from(b'6'));
        assert_eq!(NATIONS[6].0, "Germany");
    }
}
