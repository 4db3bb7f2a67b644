//! The statements of DBT-1's interactions, run from the client as
//! prepared statements instead of DBT-1's stored procedures (which exist
//! only for PostgreSQL and SAP DB), one list for every dialect.
//!
//! Where they differ from DBT-1's procedures:
//! - Best Sellers runs TPC-W's query (the 50 best-selling items of a
//!   subject among the 3,333 most recent orders); DBT-1's loaded
//!   `best_sellers` procedure is a copy of New Products by mistake;
//! - Buy Confirm lowers the stock of every line as TPC-W says (by the
//!   quantity, or restocking by 21 below 10 left); DBT-1's procedure only
//!   writes the restocked value;
//! - times are the client's clock, passed as parameters, and rows are
//!   inserted with VALUES from what an earlier query read (DBT-1's
//!   procedures use `INSERT … SELECT` and `now()`), so the text is the
//!   same in every dialect and the data flows through the client.

use std::borrow::Cow;

use crate::workload::StatementDef;

/// The statements, in [`Stmt`] order.
const ALL: [(&str, &str); 37] = [
    (
        "customer_name",
        "SELECT c_fname, c_lname, c_discount FROM customer WHERE c_id = ?",
    ),
    (
        "promotions",
        "SELECT j.i_id, j.i_thumbnail FROM item i, item j WHERE i.i_id = ? AND j.i_id IN \
         (i.i_related1, i.i_related2, i.i_related3, i.i_related4, i.i_related5)",
    ),
    (
        "new_products",
        "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_subject = ? \
         AND a_id = i_a_id ORDER BY i_pub_date DESC, i_title LIMIT 50",
    ),
    (
        "best_sellers",
        "SELECT i_id, i_title, a_fname, a_lname FROM item, author, order_line \
         WHERE ol_o_id > (SELECT MAX(o_id) - 3333 FROM orders) AND i_id = ol_i_id \
         AND a_id = i_a_id AND i_subject = ? GROUP BY i_id, i_title, a_fname, a_lname \
         ORDER BY SUM(ol_qty) DESC LIMIT 50",
    ),
    (
        "product_detail",
        "SELECT i_title, a_fname, a_lname, i_pub_date, i_publisher, i_subject, i_desc, \
         i_image, i_cost, i_srp, i_avail, i_isbn, i_page, i_backing, i_dimensions \
         FROM item, author WHERE i_id = ? AND a_id = i_a_id",
    ),
    (
        "search_author",
        "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE a_lname LIKE ? \
         AND i_a_id = a_id ORDER BY i_title LIMIT 50",
    ),
    (
        "search_title",
        "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_title LIKE ? \
         AND i_a_id = a_id ORDER BY i_title LIMIT 50",
    ),
    (
        "search_subject",
        "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_subject = ? \
         AND i_a_id = a_id ORDER BY i_title LIMIT 50",
    ),
    (
        "next_ids",
        "SELECT (SELECT MAX(o_id) FROM orders), (SELECT MAX(sc_id) FROM shopping_cart), \
         (SELECT MAX(c_id) FROM customer), (SELECT MAX(addr_id) FROM address)",
    ),
    (
        "cart_create",
        "INSERT INTO shopping_cart (sc_id, sc_c_id, sc_date, sc_sub_total, sc_c_fname, \
         sc_c_lname, sc_c_discount) VALUES (?, ?, ?, 0, ?, ?, ?)",
    ),
    (
        "cart_create_anonymous",
        "INSERT INTO shopping_cart (sc_id, sc_c_id, sc_date, sc_sub_total) VALUES (?, NULL, ?, 0)",
    ),
    (
        "cart_item",
        "SELECT i_cost, i_srp, i_title, i_backing FROM item WHERE i_id = ?",
    ),
    (
        "cart_add",
        "INSERT INTO shopping_cart_line (scl_sc_id, scl_i_id, scl_qty, scl_cost, scl_srp, \
         scl_title, scl_backing) VALUES (?, ?, 1, ?, ?, ?, ?)",
    ),
    (
        "cart_add_more",
        "UPDATE shopping_cart_line SET scl_qty = scl_qty + 1 WHERE scl_sc_id = ? AND scl_i_id = ?",
    ),
    (
        "cart_set_qty",
        "UPDATE shopping_cart_line SET scl_qty = ? WHERE scl_sc_id = ? AND scl_i_id = ?",
    ),
    (
        "cart_subtotal",
        "UPDATE shopping_cart SET sc_sub_total = (SELECT COALESCE(SUM(scl_cost * scl_qty), 0) \
         FROM shopping_cart_line WHERE scl_sc_id = ?), sc_date = ? WHERE sc_id = ?",
    ),
    (
        "cart_lines",
        "SELECT scl_i_id, scl_qty, scl_cost, scl_srp, scl_title, scl_backing \
         FROM shopping_cart_line WHERE scl_sc_id = ? ORDER BY scl_i_id",
    ),
    (
        "login",
        "SELECT c_id, c_passwd, c_fname, c_lname, c_discount, addr_street1, addr_street2, \
         addr_city, addr_state, addr_zip, co_name, c_phone, c_email, c_data, c_birthdate \
         FROM customer, address, country WHERE c_uname = ? AND addr_id = c_addr_id \
         AND co_id = addr_co_id",
    ),
    (
        "login_update",
        "UPDATE customer SET c_login = ?, c_expiration = ? WHERE c_id = ?",
    ),
    (
        "address_insert",
        "INSERT INTO address (addr_id, addr_street1, addr_street2, addr_city, addr_state, \
         addr_zip, addr_co_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    (
        "customer_insert",
        "INSERT INTO customer (c_id, c_uname, c_passwd, c_fname, c_lname, c_addr_id, c_phone, \
         c_email, c_since, c_last_visit, c_login, c_expiration, c_discount, c_balance, \
         c_ytd_pmt, c_birthdate, c_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)",
    ),
    (
        "cart_owner",
        "UPDATE shopping_cart SET sc_c_id = ?, sc_c_fname = ?, sc_c_lname = ?, \
         sc_c_discount = ? WHERE sc_id = ?",
    ),
    (
        "cart_reprice",
        "UPDATE shopping_cart_line SET scl_cost = (SELECT i_cost FROM item \
         WHERE i_id = scl_i_id) WHERE scl_sc_id = ?",
    ),
    (
        "cart_sums",
        "SELECT COALESCE(SUM(scl_cost * scl_qty), 0), COALESCE(SUM(scl_qty), 0) \
         FROM shopping_cart_line WHERE scl_sc_id = ?",
    ),
    (
        "cart_totals",
        "UPDATE shopping_cart SET sc_sub_total = ?, sc_tax = ?, sc_ship_cost = ?, \
         sc_total = ?, sc_date = ? WHERE sc_id = ?",
    ),
    (
        "cart_read_totals",
        "SELECT sc_sub_total, sc_tax, sc_ship_cost, sc_total FROM shopping_cart WHERE sc_id = ?",
    ),
    (
        "customer_address",
        "SELECT c_addr_id, c_discount, addr_co_id FROM customer, address \
         WHERE c_id = ? AND addr_id = c_addr_id",
    ),
    (
        "order_insert",
        "INSERT INTO orders (o_id, o_c_id, o_date, o_sub_total, o_tax, o_total, o_ship_type, \
         o_ship_date, o_bill_addr_id, o_ship_addr_id, o_status) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING')",
    ),
    (
        "order_line_insert",
        "INSERT INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments) \
         VALUES (?, ?, ?, ?, ?, ?)",
    ),
    (
        "stock_update",
        "UPDATE item SET i_stock = CASE WHEN i_stock - ? >= 10 THEN i_stock - ? \
         ELSE i_stock - ? + 21 END WHERE i_id = ?",
    ),
    (
        "cc_xact_insert",
        "INSERT INTO cc_xacts (cx_o_id, cx_type, cx_num, cx_name, cx_expiry, cx_auth_id, \
         cx_xact_amt, cx_xact_date, cx_co_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    ("customer_uname", "SELECT c_uname FROM customer WHERE c_id = ?"),
    (
        "last_order",
        "SELECT o_id, o_bill_addr_id, o_ship_addr_id, o_date, o_sub_total, o_tax, o_total, \
         o_ship_type, o_ship_date, o_status, c_fname, c_lname, c_phone, c_email \
         FROM customer, orders WHERE c_uname = ? AND c_passwd = ? AND o_c_id = c_id \
         ORDER BY o_date DESC, o_id DESC LIMIT 1",
    ),
    (
        "order_address",
        "SELECT addr_street1, addr_street2, addr_city, addr_state, addr_zip, co_name \
         FROM address, country WHERE addr_id = ? AND co_id = addr_co_id",
    ),
    (
        "order_lines",
        "SELECT ol_i_id, i_title, i_publisher, i_cost, ol_qty, ol_discount, ol_comments, \
         cx_type, cx_auth_id FROM order_line, item, cc_xacts WHERE ol_o_id = ? \
         AND i_id = ol_i_id AND cx_o_id = ol_o_id",
    ),
    (
        "admin_item",
        "SELECT i_srp, i_cost, i_title, i_image, i_thumbnail, a_fname, a_lname \
         FROM item, author WHERE i_id = ? AND a_id = i_a_id",
    ),
    (
        "admin_update",
        "UPDATE item SET i_image = ?, i_thumbnail = ?, i_cost = ?, i_pub_date = ? WHERE i_id = ?",
    ),
];

/// A statement's index in the prepared list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Stmt {
    CustomerName,
    Promotions,
    NewProducts,
    BestSellers,
    ProductDetail,
    SearchAuthor,
    SearchTitle,
    SearchSubject,
    NextIds,
    CartCreate,
    CartCreateAnonymous,
    CartItem,
    CartAdd,
    CartAddMore,
    CartSetQty,
    CartSubtotal,
    CartLines,
    Login,
    LoginUpdate,
    AddressInsert,
    CustomerInsert,
    CartOwner,
    CartReprice,
    CartSums,
    CartTotals,
    CartReadTotals,
    CustomerAddress,
    OrderInsert,
    OrderLineInsert,
    StockUpdate,
    CcXactInsert,
    CustomerUname,
    LastOrder,
    OrderAddress,
    OrderLines,
    AdminItem,
    AdminUpdate,
}

/// The statements to prepare, their placeholders rendered for `dialect`.
pub fn statements(dialect: crate::driver::Dialect) -> Vec<StatementDef> {
    ALL.iter()
        .map(|(kind, sql)| StatementDef {
            kind: Cow::Borrowed(kind),
            sql: crate::workload::sysbench::render(dialect, sql),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_enum_indexes_the_list() {
        assert_eq!(Stmt::AdminUpdate as usize + 1, ALL.len());
        assert_eq!(ALL[Stmt::Login as usize].0, "login");
        assert_eq!(ALL[Stmt::CcXactInsert as usize].0, "cc_xact_insert");
        assert_eq!(ALL[Stmt::CartLines as usize].0, "cart_lines");
    }
}
