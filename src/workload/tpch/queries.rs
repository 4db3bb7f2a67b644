//! TPC-H's 22 queries (clause 2.4) and the refresh functions' statements
//! (clause 2.5), written once with `?` for each substitution parameter
//! (in the order `params::draw` gives them) and rendered per dialect.
//!
//! The text is the spec's, with only the minor modifications clause
//! 2.2.3.3 permits, the same on every engine:
//! - date arithmetic computed by the client (`params`), and the spec's
//!   `date 'YYYY-MM-DD'` literals written as plain strings compared with
//!   DATE columns (SQLite stores dates as ISO text, which orders the same);
//! - the row limits of Q2, Q3, Q10, Q18 and Q21 as `LIMIT`;
//! - Q13's derived table names its columns inside (`count(o_orderkey) as
//!   c_count`) rather than in a column list, which MariaDB does not take;
//! - Q15 as the spec's variant with a common table expression instead of
//!   a view created and dropped by the stream (so MariaDB before 10.2
//!   and MySQL before 8.0, without `WITH`, cannot run it); on MariaDB and
//!   MySQL its two dates are bound to user variables by a statement of
//!   their own just before it ([`q15_bound`]), as MariaDB 10.2 cannot
//!   prepare a placeholder inside a `WITH`;
//! - on SQLite, which has neither `extract` nor `substring … from … for`,
//!   `strftime('%Y', …)` and `substr(…, 1, 2)`.

use crate::driver::Dialect;

/// Query `q` for `dialect`, its placeholders as the driver takes them
/// (`$1, $2, …` on PostgreSQL).
pub fn query(q: u8, dialect: Dialect) -> String {
    crate::workload::sysbench::render(dialect, &text(q, dialect))
}

/// Q15 for a server that takes its parameters through user variables
/// (MariaDB, MySQL): the statement binding them (prepared, with Q15's two
/// placeholders) and Q15's text reading them, both rendered for `dialect`.
pub fn q15_bound(dialect: Dialect) -> [String; 2] {
    let vars = ["", "@tpch_q15_from", "@tpch_q15_to"];
    let reading: String = text(15, dialect)
        .split('?')
        .enumerate()
        .flat_map(|(i, part)| [vars[i.min(2)], part])
        .collect();
    let render = crate::workload::sysbench::render;
    [
        render(dialect, "set @tpch_q15_from = ?, @tpch_q15_to = ?"),
        render(dialect, &reading),
    ]
}

/// Query `q`'s text for `dialect`, with `?` placeholders.
pub fn text(q: u8, dialect: Dialect) -> String {
    let year = |col: &str| match dialect {
        Dialect::Sqlite => format!("cast(strftime('%Y', {col}) as integer)"),
        _ => format!("extract(year from {col})"),
    };
    let code = match dialect {
        Dialect::Sqlite => "substr(c_phone, 1, 2)",
        _ => "substring(c_phone from 1 for 2)",
    };
    if q <= 11 {
        pricing_to_stock(q, &year)
    } else {
        shipping_to_sales(q, code)
    }
}

/// Q1–Q11 (pricing summary to important stock), `year(column)` the
/// dialect's year of a date.
fn pricing_to_stock(q: u8, year: &dyn Fn(&str) -> String) -> String {
    match q {
        1 => "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, \
              sum(l_extendedprice) as sum_base_price, \
              sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, \
              sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, \
              avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, \
              avg(l_discount) as avg_disc, count(*) as count_order \
              from lineitem where l_shipdate <= ? \
              group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"
            .to_string(),
        2 => "select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment \
              from part, supplier, partsupp, nation, region \
              where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = ? \
              and p_type like ? and s_nationkey = n_nationkey and n_regionkey = r_regionkey \
              and r_name = ? and ps_supplycost = (select min(ps_supplycost) \
              from partsupp, supplier, nation, region where p_partkey = ps_partkey \
              and s_suppkey = ps_suppkey and s_nationkey = n_nationkey \
              and n_regionkey = r_regionkey and r_name = ?) \
              order by s_acctbal desc, n_name, s_name, p_partkey limit 100"
            .to_string(),
        3 => "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, \
              o_orderdate, o_shippriority from customer, orders, lineitem \
              where c_mktsegment = ? and c_custkey = o_custkey and l_orderkey = o_orderkey \
              and o_orderdate < ? and l_shipdate > ? \
              group by l_orderkey, o_orderdate, o_shippriority \
              order by revenue desc, o_orderdate limit 10"
            .to_string(),
        4 => "select o_orderpriority, count(*) as order_count from orders \
              where o_orderdate >= ? and o_orderdate < ? and exists (select * from lineitem \
              where l_orderkey = o_orderkey and l_commitdate < l_receiptdate) \
              group by o_orderpriority order by o_orderpriority"
            .to_string(),
        5 => "select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue \
              from customer, orders, lineitem, supplier, nation, region \
              where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey \
              and c_nationkey = s_nationkey and s_nationkey = n_nationkey \
              and n_regionkey = r_regionkey and r_name = ? and o_orderdate >= ? \
              and o_orderdate < ? group by n_name order by revenue desc"
            .to_string(),
        6 => "select sum(l_extendedprice * l_discount) as revenue from lineitem \
              where l_shipdate >= ? and l_shipdate < ? and l_discount between ? and ? \
              and l_quantity < ?"
            .to_string(),
        7 => format!(
            "select supp_nation, cust_nation, l_year, sum(volume) as revenue from \
             (select n1.n_name as supp_nation, n2.n_name as cust_nation, {} as l_year, \
             l_extendedprice * (1 - l_discount) as volume \
             from supplier, lineitem, orders, customer, nation n1, nation n2 \
             where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey \
             and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey \
             and ((n1.n_name = ? and n2.n_name = ?) or (n1.n_name = ? and n2.n_name = ?)) \
             and l_shipdate between '1995-01-01' and '1996-12-31') as shipping \
             group by supp_nation, cust_nation, l_year \
             order by supp_nation, cust_nation, l_year",
            year("l_shipdate")
        ),
        8 => format!(
            "select o_year, sum(case when nation = ? then volume else 0 end) / sum(volume) \
             as mkt_share from (select {} as o_year, \
             l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation \
             from part, supplier, lineitem, orders, customer, nation n1, nation n2, region \
             where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey \
             and o_custkey = c_custkey and c_nationkey = n1.n_nationkey \
             and n1.n_regionkey = r_regionkey and r_name = ? and s_nationkey = n2.n_nationkey \
             and o_orderdate between '1995-01-01' and '1996-12-31' and p_type = ?) \
             as all_nations group by o_year order by o_year",
            year("o_orderdate")
        ),
        9 => format!(
            "select nation, o_year, sum(amount) as sum_profit from \
             (select n_name as nation, {} as o_year, \
             l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount \
             from part, supplier, lineitem, partsupp, orders, nation \
             where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey \
             and p_partkey = l_partkey and o_orderkey = l_orderkey \
             and s_nationkey = n_nationkey and p_name like ?) as profit \
             group by nation, o_year order by nation, o_year desc",
            year("o_orderdate")
        ),
        10 => "select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, \
               c_acctbal, n_name, c_address, c_phone, c_comment \
               from customer, orders, lineitem, nation \
               where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= ? \
               and o_orderdate < ? and l_returnflag = 'R' and c_nationkey = n_nationkey \
               group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment \
               order by revenue desc limit 20"
            .to_string(),
        11 => "select ps_partkey, sum(ps_supplycost * ps_availqty) as value \
               from partsupp, supplier, nation \
               where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ? \
               group by ps_partkey having sum(ps_supplycost * ps_availqty) > \
               (select sum(ps_supplycost * ps_availqty) * ? from partsupp, supplier, nation \
               where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ?) \
               order by value desc"
            .to_string(),
        _ => unreachable!("Q{q} is not among Q1-Q11"),
    }
}

/// Q12–Q22 (shipping modes to global sales opportunity), `code` the
/// dialect's country code of a phone number.
fn shipping_to_sales(q: u8, code: &str) -> String {
    match q {
        12 => "select l_shipmode, sum(case when o_orderpriority = '1-URGENT' \
               or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count, \
               sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' \
               then 1 else 0 end) as low_line_count from orders, lineitem \
               where o_orderkey = l_orderkey and l_shipmode in (?, ?) \
               and l_commitdate < l_receiptdate and l_shipdate < l_commitdate \
               and l_receiptdate >= ? and l_receiptdate < ? \
               group by l_shipmode order by l_shipmode"
            .to_string(),
        13 => "select c_count, count(*) as custdist from \
               (select c_custkey, count(o_orderkey) as c_count \
               from customer left outer join orders on c_custkey = o_custkey \
               and o_comment not like ? group by c_custkey) as c_orders \
               group by c_count order by custdist desc, c_count desc"
            .to_string(),
        14 => "select 100.00 * sum(case when p_type like 'PROMO%' \
               then l_extendedprice * (1 - l_discount) else 0 end) \
               / sum(l_extendedprice * (1 - l_discount)) as promo_revenue \
               from lineitem, part where l_partkey = p_partkey and l_shipdate >= ? \
               and l_shipdate < ?"
            .to_string(),
        15 => "with revenue0 as (select l_suppkey as supplier_no, \
               sum(l_extendedprice * (1 - l_discount)) as total_revenue from lineitem \
               where l_shipdate >= ? and l_shipdate < ? group by l_suppkey) \
               select s_suppkey, s_name, s_address, s_phone, total_revenue \
               from supplier, revenue0 where s_suppkey = supplier_no \
               and total_revenue = (select max(total_revenue) from revenue0) \
               order by s_suppkey"
            .to_string(),
        16 => "select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt \
               from partsupp, part where p_partkey = ps_partkey and p_brand <> ? \
               and p_type not like ? and p_size in (?, ?, ?, ?, ?, ?, ?, ?) \
               and ps_suppkey not in (select s_suppkey from supplier \
               where s_comment like '%Customer%Complaints%') \
               group by p_brand, p_type, p_size \
               order by supplier_cnt desc, p_brand, p_type, p_size"
            .to_string(),
        17 => "select sum(l_extendedprice) / 7.0 as avg_yearly from lineitem, part \
               where p_partkey = l_partkey and p_brand = ? and p_container = ? \
               and l_quantity < (select 0.2 * avg(l_quantity) from lineitem \
               where l_partkey = p_partkey)"
            .to_string(),
        18 => "select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) \
               from customer, orders, lineitem where o_orderkey in (select l_orderkey \
               from lineitem group by l_orderkey having sum(l_quantity) > ?) \
               and c_custkey = o_custkey and o_orderkey = l_orderkey \
               group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice \
               order by o_totalprice desc, o_orderdate limit 100"
            .to_string(),
        19 => {
            let branch = |containers: &str, size: u32| {
                format!(
                    "(p_partkey = l_partkey and p_brand = ? and p_container in ({containers}) \
                     and l_quantity >= ? and l_quantity <= ? and p_size between 1 and {size} \
                     and l_shipmode in ('AIR', 'AIR REG') \
                     and l_shipinstruct = 'DELIVER IN PERSON')"
                )
            };
            format!(
                "select sum(l_extendedprice * (1 - l_discount)) as revenue from lineitem, part \
                 where {} or {} or {}",
                branch("'SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'", 5),
                branch("'MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'", 10),
                branch("'LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'", 15)
            )
        }
        20 => "select s_name, s_address from supplier, nation where s_suppkey in \
               (select ps_suppkey from partsupp where ps_partkey in \
               (select p_partkey from part where p_name like ?) and ps_availqty > \
               (select 0.5 * sum(l_quantity) from lineitem where l_partkey = ps_partkey \
               and l_suppkey = ps_suppkey and l_shipdate >= ? and l_shipdate < ?)) \
               and s_nationkey = n_nationkey and n_name = ? order by s_name"
            .to_string(),
        21 => "select s_name, count(*) as numwait from supplier, lineitem l1, orders, nation \
               where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey \
               and o_orderstatus = 'F' and l1.l_receiptdate > l1.l_commitdate \
               and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey \
               and l2.l_suppkey <> l1.l_suppkey) \
               and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey \
               and l3.l_suppkey <> l1.l_suppkey and l3.l_receiptdate > l3.l_commitdate) \
               and s_nationkey = n_nationkey and n_name = ? \
               group by s_name order by numwait desc, s_name limit 100"
            .to_string(),
        22 => format!(
            "select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal from \
             (select {code} as cntrycode, c_acctbal from customer \
             where {code} in (?, ?, ?, ?, ?, ?, ?) and c_acctbal > \
             (select avg(c_acctbal) from customer where c_acctbal > 0.00 \
             and {code} in (?, ?, ?, ?, ?, ?, ?)) \
             and not exists (select * from orders where o_custkey = c_custkey)) as custsale \
             group by cntrycode order by cntrycode"
        ),
        _ => unreachable!("TPC-H has queries 1 to 22"),
    }
}

/// The number of `?` in query `q`: what `params::draw` must give it.
#[cfg(test)]
pub fn placeholders(q: u8) -> usize {
    query(q, Dialect::Sqlite).matches('?').count()
}

/// RF1's inserts (a new order, then each of its lines) and RF2's deletes
/// (an order's lines, then the order), each `?` one column or key.
pub fn refresh(dialect: Dialect) -> [String; 4] {
    let insert = |table: &str, columns: &[&str]| {
        let marks = vec!["?"; columns.len()].join(", ");
        crate::workload::sysbench::render(
            dialect,
            &format!(
                "insert into {table} ({}) values ({marks})",
                columns.join(", ")
            ),
        )
    };
    [
        insert("orders", super::schema::ORDERS),
        insert("lineitem", super::schema::LINEITEM),
        crate::workload::sysbench::render(dialect, "delete from lineitem where l_orderkey = ?"),
        crate::workload::sysbench::render(dialect, "delete from orders where o_orderkey = ?"),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::params::draw;
    use super::*;
    use crate::rand::Rng;

    #[test]
    fn every_query_takes_the_values_drawn_for_it() {
        let mut rng = Rng::new(1);
        let mut out = Vec::new();
        for q in 1..=22 {
            draw(q, 1.0, Some(&mut rng), &mut out);
            assert_eq!(out.len(), placeholders(q), "Q{q} drawn");
            draw(q, 1.0, None, &mut out);
            assert_eq!(out.len(), placeholders(q), "Q{q} qualification");
            let pg = query(q, Dialect::Postgres);
            assert!(
                pg.contains(&format!("${}", out.len())) && !pg.contains('?'),
                "{pg}"
            );
        }
        assert!(query(7, Dialect::Sqlite).contains("strftime('%Y', l_shipdate)"));
        assert!(query(22, Dialect::Mysql).contains("substring(c_phone from 1 for 2)"));
    }

    #[test]
    fn q15_on_mariadb_reads_its_dates_from_variables_bound_just_before() {
        let [set, reading] = q15_bound(Dialect::Mysql);
        assert_eq!(set, "set @tpch_q15_from = ?, @tpch_q15_to = ?");
        assert_eq!(set.matches('?').count(), placeholders(15));
        assert!(!reading.contains('?'), "{reading}");
        assert!(
            reading.contains("where l_shipdate >= @tpch_q15_from and l_shipdate < @tpch_q15_to"),
            "{reading}"
        );
        assert_eq!(
            reading
                .replace("@tpch_q15_from", "?")
                .replace("@tpch_q15_to", "?"),
            query(15, Dialect::Mysql)
        );
    }
}
