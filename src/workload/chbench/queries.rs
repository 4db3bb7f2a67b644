//! CH-benCHmark's 22 analytical queries: TPC-H's, rewritten by the
//! benchmark's authors over TPC-C's schema and the three added tables
//! (Cole et al., "The mixed workload CH-benCHmark", DBTest 2011). They
//! take no substitution parameters: each is one fixed text, the same in
//! every stream.
//!
//! Written once with three dialect pieces: the year of a timestamp
//! (`extract` on the servers, `strftime` on SQLite), the character code of
//! a state's first letter (`ascii`; SQLite's `unicode`), and nothing
//! else — `substr` and `%` are the same on all three. Q15's view
//! is a common table expression, as TPC-H's permitted variant (MariaDB
//! 10.2 and MySQL 8.0 have `WITH`). The orders table is `orders`
//! (TPC-C's ORDER), and every date is compared as `'2007-01-02
//! 00:00:00'`, which SQLite's text timestamps compare correctly with.
//! `LIKE` matches case-sensitively on every engine, as on PostgreSQL (the
//! patterns `'%b'`, `'PR%'` … pick items by the case of a random
//! string): SQLite's `LIKE` ignores ASCII case, so its patterns become
//! `GLOB`s, and MariaDB's follows the column's collation (case-blind by
//! default), so its patterns are `LIKE BINARY`.

use crate::driver::Dialect;

/// The year of timestamp column `col`.
fn year(dialect: Dialect, col: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("CAST(strftime('%Y', {col}) AS INTEGER)"),
        _ => format!("extract(YEAR FROM {col})"),
    }
}

/// The character code of the first character of `col`.
fn code(dialect: Dialect, col: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("unicode(substr({col}, 1, 1))"),
        _ => format!("ascii(substr({col}, 1, 1))"),
    }
}

/// A stock row's supplier.
const SUPPLIER: &str = "((s_w_id * s_i_id) % 10000)";

/// Query `q` (1–22) in `dialect`.
pub fn query(q: u8, dialect: Dialect) -> String {
    case_sensitive(&text(q, dialect), dialect)
}

/// `sql`'s `LIKE 'pattern'`s as case-sensitive matches in `dialect`.
fn case_sensitive(sql: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Postgres => sql.to_string(),
        Dialect::Mysql => sql.replace("LIKE '", "LIKE BINARY '"),
        Dialect::Sqlite => {
            let mut out = String::with_capacity(sql.len());
            let mut rest = sql;
            while let Some(at) = rest.find("LIKE '") {
                out.push_str(&rest[..at]);
                let lit = &rest[at + 6..];
                let end = lit.find('\'').expect("a LIKE pattern ends");
                let glob: String = lit[..end]
                    .chars()
                    .map(|c| match c {
                        '%' => '*',
                        '_' => '?',
                        c => c,
                    })
                    .collect();
                out.push_str(&format!("GLOB '{glob}'"));
                rest = &lit[end + 1..];
            }
            out.push_str(rest);
            out
        }
    }
}

/// Query `q`'s text in `dialect`, its patterns as written.
fn text(q: u8, dialect: Dialect) -> String {
    let d = dialect;
    let since = "'2007-01-02 00:00:00'";
    let s = SUPPLIER;
    match q {
        1 => format!(
            "SELECT ol_number, sum(ol_quantity) AS sum_qty, sum(ol_amount) AS sum_amount, \
             avg(ol_quantity) AS avg_qty, avg(ol_amount) AS avg_amount, count(*) AS count_order \
             FROM order_line WHERE ol_delivery_d > {since} \
             GROUP BY ol_number ORDER BY ol_number"
        ),
        2 => format!(
            "SELECT su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment \
             FROM item, supplier, stock, nation, region, \
             (SELECT s_i_id AS m_i_id, min(s_quantity) AS m_s_quantity \
              FROM stock, supplier, nation, region \
              WHERE {s} = su_suppkey AND su_nationkey = n_nationkey \
              AND n_regionkey = r_regionkey AND r_name LIKE 'Europ%' GROUP BY s_i_id) m \
             WHERE i_id = s_i_id AND {s} = su_suppkey AND su_nationkey = n_nationkey \
             AND n_regionkey = r_regionkey AND i_data LIKE '%b' AND r_name LIKE 'Europ%' \
             AND i_id = m_i_id AND s_quantity = m_s_quantity \
             ORDER BY n_name, su_name, i_id"
        ),
        3 => format!(
            "SELECT ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) AS revenue, o_entry_d \
             FROM customer, new_order, orders, order_line \
             WHERE c_state LIKE 'A%' AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
             AND no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
             AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             AND o_entry_d > {since} \
             GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d ORDER BY revenue DESC, o_entry_d"
        ),
        4 => "SELECT o_ol_cnt, count(*) AS order_count FROM orders \
              WHERE EXISTS (SELECT * FROM order_line WHERE o_id = ol_o_id AND o_w_id = ol_w_id \
              AND o_d_id = ol_d_id AND ol_delivery_d >= o_entry_d) \
              GROUP BY o_ol_cnt ORDER BY o_ol_cnt"
            .to_string(),
        5 => format!(
            "SELECT n_name, sum(ol_amount) AS revenue \
             FROM customer, orders, order_line, stock, supplier, nation, region \
             WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
             AND ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id \
             AND ol_w_id = s_w_id AND ol_i_id = s_i_id AND {s} = su_suppkey \
             AND {c} = su_nationkey AND su_nationkey = n_nationkey \
             AND n_regionkey = r_regionkey AND r_name = 'Europe' AND o_entry_d >= {since} \
             GROUP BY n_name ORDER BY revenue DESC",
            c = code(d, "c_state")
        ),
        6 => "SELECT sum(ol_amount) AS revenue FROM order_line \
              WHERE ol_delivery_d >= '1999-01-01 00:00:00' AND ol_delivery_d < '2020-01-01 00:00:00' \
              AND ol_quantity BETWEEN 1 AND 100000"
            .to_string(),
        7 => format!(
            "SELECT su_nationkey AS supp_nation, substr(c_state, 1, 1) AS cust_nation, \
             {y} AS l_year, sum(ol_amount) AS revenue \
             FROM supplier, stock, order_line, orders, customer, nation n1, nation n2 \
             WHERE ol_supply_w_id = s_w_id AND ol_i_id = s_i_id AND {s} = su_suppkey \
             AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
             AND su_nationkey = n1.n_nationkey AND {c} = n2.n_nationkey \
             AND ((n1.n_name = 'Germany' AND n2.n_name = 'Cambodia') \
              OR (n1.n_name = 'Cambodia' AND n2.n_name = 'Germany')) \
             GROUP BY su_nationkey, substr(c_state, 1, 1), {y} \
             ORDER BY su_nationkey, cust_nation, l_year",
            y = year(d, "o_entry_d"),
            c = code(d, "c_state")
        ),
        8 => format!(
            "SELECT {y} AS l_year, \
             1.0 * sum(CASE WHEN n2.n_name = 'Germany' THEN ol_amount ELSE 0 END) / sum(ol_amount) \
             AS mkt_share \
             FROM item, supplier, stock, order_line, orders, customer, nation n1, nation n2, region \
             WHERE i_id = s_i_id AND ol_i_id = s_i_id AND ol_supply_w_id = s_w_id \
             AND {s} = su_suppkey AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
             AND n1.n_nationkey = {c} AND n1.n_regionkey = r_regionkey AND ol_i_id < 1000 \
             AND r_name = 'Europe' AND su_nationkey = n2.n_nationkey AND i_data LIKE '%b' \
             AND i_id = ol_i_id \
             GROUP BY {y} ORDER BY l_year",
            y = year(d, "o_entry_d"),
            c = code(d, "c_state")
        ),
        9 => format!(
            "SELECT n_name, {y} AS l_year, sum(ol_amount) AS sum_profit \
             FROM item, stock, supplier, order_line, orders, nation \
             WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND {s} = su_suppkey \
             AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_i_id = i_id \
             AND su_nationkey = n_nationkey AND i_data LIKE '%bb' \
             GROUP BY n_name, {y} ORDER BY n_name, l_year DESC",
            y = year(d, "o_entry_d")
        ),
        10 => format!(
            "SELECT c_id, c_last, sum(ol_amount) AS revenue, c_city, c_phone, n_name \
             FROM customer, orders, order_line, nation \
             WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
             AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             AND o_entry_d >= {since} AND o_entry_d <= ol_delivery_d AND n_nationkey = {c} \
             GROUP BY c_id, c_last, c_city, c_phone, n_name ORDER BY revenue DESC",
            c = code(d, "c_state")
        ),
        11 => format!(
            "SELECT s_i_id, sum(s_order_cnt) AS ordercount FROM stock, supplier, nation \
             WHERE {s} = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany' \
             GROUP BY s_i_id HAVING sum(s_order_cnt) > \
             (SELECT sum(s_order_cnt) * 0.005 FROM stock, supplier, nation \
              WHERE {s} = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany') \
             ORDER BY ordercount DESC"
        ),
        _ => late(q),
    }
}

/// Queries 12–22 (the rest of [`query`]): none has a dialect's piece.
fn late(q: u8) -> String {
    let since = "'2007-01-02 00:00:00'";
    let s = SUPPLIER;
    match q {
        12 => "SELECT o_ol_cnt, \
               sum(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END) AS high_line_count, \
               sum(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) AS low_line_count \
               FROM orders, order_line \
               WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
               AND o_entry_d <= ol_delivery_d AND ol_delivery_d < '2020-01-01 00:00:00' \
               GROUP BY o_ol_cnt ORDER BY o_ol_cnt"
            .to_string(),
        13 => "SELECT c_count, count(*) AS custdist FROM \
               (SELECT c_id, count(o_id) AS c_count FROM customer LEFT OUTER JOIN orders \
                ON (c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id AND o_carrier_id > 8) \
                GROUP BY c_id) c_orders \
               GROUP BY c_count ORDER BY custdist DESC, c_count DESC"
            .to_string(),
        14 => format!(
            "SELECT 100.00 * sum(CASE WHEN i_data LIKE 'PR%' THEN ol_amount ELSE 0 END) \
             / (1 + sum(ol_amount)) AS promo_revenue FROM order_line, item \
             WHERE ol_i_id = i_id AND ol_delivery_d >= {since} \
             AND ol_delivery_d < '2020-01-02 00:00:00'"
        ),
        15 => format!(
            "WITH revenue0 AS (SELECT {s} AS supplier_no, sum(ol_amount) AS total_revenue \
              FROM order_line, stock WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id \
              AND ol_delivery_d >= {since} GROUP BY {s}) \
             SELECT su_suppkey, su_name, su_address, su_phone, total_revenue \
             FROM supplier, revenue0 WHERE su_suppkey = supplier_no \
             AND total_revenue = (SELECT max(total_revenue) FROM revenue0) ORDER BY su_suppkey"
        ),
        16 => format!(
            "SELECT i_name, substr(i_data, 1, 3) AS brand, i_price, \
             count(DISTINCT {s}) AS supplier_cnt FROM stock, item \
             WHERE i_id = s_i_id AND i_data NOT LIKE 'zz%' \
             AND {s} NOT IN (SELECT su_suppkey FROM supplier WHERE su_comment LIKE '%bad%') \
             GROUP BY i_name, substr(i_data, 1, 3), i_price ORDER BY supplier_cnt DESC"
        ),
        17 => "SELECT sum(ol_amount) / 2.0 AS avg_yearly FROM order_line, \
               (SELECT i_id, avg(ol_quantity) AS a FROM item, order_line \
                WHERE i_data LIKE '%b' AND ol_i_id = i_id GROUP BY i_id) t \
               WHERE ol_i_id = t.i_id AND ol_quantity < t.a"
            .to_string(),
        18 => "SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) AS amount_sum \
               FROM customer, orders, order_line \
               WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
               AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
               GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt \
               HAVING sum(ol_amount) > 200 ORDER BY amount_sum DESC, o_entry_d"
            .to_string(),
        19 => "SELECT sum(ol_amount) AS revenue FROM order_line, item \
               WHERE (ol_i_id = i_id AND i_data LIKE '%a' AND ol_quantity >= 1 AND ol_quantity <= 10 \
                AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 3)) \
               OR (ol_i_id = i_id AND i_data LIKE '%b' AND ol_quantity >= 1 AND ol_quantity <= 10 \
                AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 4)) \
               OR (ol_i_id = i_id AND i_data LIKE '%c' AND ol_quantity >= 1 AND ol_quantity <= 10 \
                AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 5, 3))"
            .to_string(),
        20 => format!(
            "SELECT su_name, su_address FROM supplier, nation \
             WHERE su_suppkey IN (SELECT {s} FROM stock \
              INNER JOIN item ON i_id = s_i_id INNER JOIN order_line ON ol_i_id = s_i_id \
              WHERE ol_delivery_d > '2010-05-23 12:00:00' AND i_data LIKE 'co%' \
              GROUP BY s_i_id, s_w_id, s_quantity HAVING 2 * s_quantity > sum(ol_quantity)) \
             AND su_nationkey = n_nationkey AND n_name = 'Germany' ORDER BY su_name"
        ),
        21 => format!(
            "SELECT su_name, count(*) AS numwait FROM supplier, order_line l1, orders, stock, nation \
             WHERE ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id \
             AND ol_w_id = s_w_id AND ol_i_id = s_i_id AND {s} = su_suppkey \
             AND l1.ol_delivery_d > o_entry_d \
             AND NOT EXISTS (SELECT * FROM order_line l2 WHERE l2.ol_o_id = l1.ol_o_id \
              AND l2.ol_w_id = l1.ol_w_id AND l2.ol_d_id = l1.ol_d_id \
              AND l2.ol_delivery_d > l1.ol_delivery_d) \
             AND su_nationkey = n_nationkey AND n_name = 'Germany' \
             GROUP BY su_name ORDER BY numwait DESC, su_name"
        ),
        22 => "SELECT substr(c_state, 1, 1) AS country, count(*) AS numcust, \
               sum(c_balance) AS totacctbal FROM customer \
               WHERE substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7') \
               AND c_balance > (SELECT avg(c_balance) FROM customer WHERE c_balance > 0.00 \
                AND substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7')) \
               AND NOT EXISTS (SELECT * FROM orders WHERE o_c_id = c_id AND o_w_id = c_w_id \
                AND o_d_id = c_d_id) \
               GROUP BY substr(c_state, 1, 1) ORDER BY country"
            .to_string(),
        _ => panic!("CH-benCHmark has queries 1 to 22, not {q}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_has_its_dialects_pieces() {
        for d in [Dialect::Sqlite, Dialect::Mysql, Dialect::Postgres] {
            for q in 1..=22 {
                let sql = query(q, d);
                assert!(sql.starts_with("SELECT") || sql.starts_with("WITH"), "Q{q}");
                assert_eq!(
                    sql.contains("strftime"),
                    d == Dialect::Sqlite && [7, 8, 9].contains(&q)
                );
                assert!(!sql.contains("oorder"), "TPC-C's table is orders: Q{q}");
            }
        }
        assert!(query(5, Dialect::Sqlite).contains("unicode(substr(c_state, 1, 1))"));
        assert!(query(5, Dialect::Postgres).contains("ascii(substr(c_state, 1, 1))"));
    }

    #[test]
    fn patterns_match_case_sensitively_everywhere() {
        let q16 = |d| query(16, d);
        assert!(q16(Dialect::Sqlite).contains("i_data NOT GLOB 'zz*'"));
        assert!(q16(Dialect::Sqlite).contains("su_comment GLOB '*bad*'"));
        assert!(q16(Dialect::Mysql).contains("i_data NOT LIKE BINARY 'zz%'"));
        assert!(q16(Dialect::Postgres).contains("i_data NOT LIKE 'zz%'"));
        for q in 1..=22 {
            assert!(!query(q, Dialect::Sqlite).contains("LIKE"), "Q{q}");
        }
    }
}
