//! The statements of TPC-C's five transactions (clauses 2.4–2.8), as
//! prepared statements, one list for every dialect but for Delivery's row
//! lock (New-Order's stock updates and order lines run as batches).
//!
//! Where the text differs from the profiles' pseudo-SQL, and why:
//! - New-Order increments D_NEXT_O_ID before reading it back (the profile
//!   reads first): the update takes the district's row lock, so two
//!   terminals of one district never read the same order number;
//! - the stock update computes S_QUANTITY's new value in the statement
//!   (the profile's rule: decrease by the quantity when 10 or more would
//!   be left, else add 91), so it holds under concurrency whatever the
//!   read returned;
//! - Delivery locks the oldest undelivered order with `FOR UPDATE` (SQLite
//!   serialises writers and has no such clause), so two Deliveries of one
//!   warehouse never deliver the same order twice.

use std::borrow::Cow;

use crate::driver::Dialect;
use crate::workload::StatementDef;

/// The statements, in [`Stmt`] order: (kind, SQL). `{D}` in the stock read
/// is the district's two digits; `{LOCK}` Delivery's lock clause.
const ALL: [(&str, &str); 32] = [
    ("no_warehouse", "SELECT w_tax FROM warehouse WHERE w_id = ?"),
    (
        "no_district_update",
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
    ),
    (
        "no_district",
        "SELECT d_tax, d_next_o_id - 1 FROM district WHERE d_w_id = ? AND d_id = ?",
    ),
    (
        "no_customer",
        "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "no_order",
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, \
         o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
    ),
    (
        "no_new_order",
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    ),
    ("no_item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"),
    (
        "no_stock",
        "SELECT s_quantity, s_data, s_dist_{D} FROM stock WHERE s_i_id = ? AND s_w_id = ?",
    ),
    (
        "no_stock_update",
        "UPDATE stock SET s_quantity = CASE WHEN s_quantity - ? >= 10 THEN s_quantity - ? \
         ELSE s_quantity - ? + 91 END, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    ),
    (
        "no_order_line",
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
    ),
    (
        "pay_warehouse_update",
        "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    ),
    (
        "pay_warehouse",
        "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
    ),
    (
        "pay_district_update",
        "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    ),
    (
        "pay_district",
        "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district \
         WHERE d_w_id = ? AND d_id = ?",
    ),
    (
        "customer_by_name",
        "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    ),
    (
        "pay_customer",
        "SELECT c_credit, c_balance, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, \
         c_state, c_zip, c_phone, c_since, c_credit_lim, c_discount FROM customer \
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "pay_customer_update",
        "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
         c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "pay_customer_data",
        "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "pay_customer_update_bc",
        "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
         c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "pay_history",
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    (
        "os_customer",
        "SELECT c_balance, c_first, c_middle, c_last FROM customer \
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "os_order",
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? \
         AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
    ),
    (
        "os_lines",
        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
         WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    ),
    (
        "dl_oldest",
        "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1{LOCK}",
    ),
    (
        "dl_new_order_delete",
        "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
    ),
    (
        "dl_order",
        "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    ),
    (
        "dl_order_update",
        "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    ),
    (
        "dl_lines_update",
        "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    ),
    (
        "dl_lines_sum",
        "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    ),
    (
        "dl_customer_update",
        "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "sl_district",
        "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
    ),
    (
        "sl_count",
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? \
         AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
    ),
];

/// Statement ids: an index into [`statements`]'s list. The stock read
/// has one statement per district ([`Stmt::stock`]), after the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Stmt {
    NoWarehouse,
    NoDistrictUpdate,
    NoDistrict,
    NoCustomer,
    NoOrder,
    NoNewOrder,
    NoItem,
    NoStock,
    NoStockUpdate,
    NoOrderLine,
    PayWarehouseUpdate,
    PayWarehouse,
    PayDistrictUpdate,
    PayDistrict,
    CustomerByName,
    PayCustomer,
    PayCustomerUpdate,
    PayCustomerData,
    PayCustomerUpdateBc,
    PayHistory,
    OsCustomer,
    OsOrder,
    OsLines,
    DlOldest,
    DlNewOrderDelete,
    DlOrder,
    DlOrderUpdate,
    DlLinesUpdate,
    DlLinesSum,
    DlCustomerUpdate,
    SlDistrict,
    SlCount,
}

/// The id of the stock read of district `d` (1..=10): the list's stock
/// read is district 1's, the other nine follow the list.
pub fn stock(d: u32) -> usize {
    if d <= 1 {
        Stmt::NoStock as usize
    } else {
        ALL.len() + d as usize - 2
    }
}

/// Every statement for `dialect`, in id order.
pub fn statements(dialect: Dialect) -> Vec<StatementDef> {
    let lock = if dialect == Dialect::Sqlite {
        ""
    } else {
        " FOR UPDATE"
    };
    let def = |kind: &'static str, sql: String| StatementDef {
        kind: Cow::Borrowed(kind),
        sql: crate::workload::sysbench::render(dialect, &sql),
    };
    let mut out: Vec<StatementDef> = ALL
        .iter()
        .map(|(kind, sql)| def(kind, sql.replace("{D}", "01").replace("{LOCK}", lock)))
        .collect();
    let stock_sql = ALL[Stmt::NoStock as usize].1;
    for d in 2..=10 {
        out.push(def(
            "no_stock",
            stock_sql.replace("{D}", &format!("{d:02}")),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_enum_indexes_the_list_and_each_district_has_its_stock_read() {
        assert_eq!(Stmt::SlCount as usize + 1, ALL.len());
        assert_eq!(ALL[Stmt::DlOldest as usize].0, "dl_oldest");
        let all = statements(Dialect::Postgres);
        assert_eq!(all.len(), ALL.len() + 9);
        for d in 1..=10 {
            assert!(
                all[stock(d)].sql.contains(&format!("s_dist_{d:02} ")),
                "{d}"
            );
        }
        assert!(all[0].sql.ends_with("w_id = $1"), "{}", all[0].sql);
        assert!(statements(Dialect::Mysql)[Stmt::DlOldest as usize]
            .sql
            .ends_with("FOR UPDATE"));
    }
}
