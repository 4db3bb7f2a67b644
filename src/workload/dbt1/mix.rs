//! The 14 interactions, TPC-W's three mixes (the transition matrices of
//! clause 5.2.2.4), their stationary distributions, and TPC-W's NURand.
//!
//! A matrix row lists, for the interaction just completed, cumulative
//! thresholds out of 10,000: the next interaction is the first whose
//! threshold is at least a uniform draw from 0..=9999 (TPC-W's and DBT-1's
//! rule). The browsing and shopping matrices are DBT-1's, identical to
//! TPC-W's. DBT-1's ordering matrix differs from TPC-W's in two cells —
//! Product Detail → Search Request 8341 where TPC-W has 6341, Buy Request
//! → Home 9452 for 9453 — which moves its browse/order split from TPC-W's
//! 50/50 to 56/44; `ordering` is TPC-W's, `ordering-dbt1` DBT-1's.

use std::time::Duration;

use crate::rand::Rng;

/// The interactions, browsing ones first (TPC-W's order of clause 5.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Interaction {
    Home,
    NewProducts,
    BestSellers,
    ProductDetail,
    SearchRequest,
    SearchResults,
    ShoppingCart,
    CustomerRegistration,
    BuyRequest,
    BuyConfirm,
    OrderInquiry,
    OrderDisplay,
    AdminRequest,
    AdminConfirm,
}

pub const N: usize = 14;

use Interaction::*;

impl Interaction {
    pub const ALL: [Interaction; N] = [
        Home,
        NewProducts,
        BestSellers,
        ProductDetail,
        SearchRequest,
        SearchResults,
        ShoppingCart,
        CustomerRegistration,
        BuyRequest,
        BuyConfirm,
        OrderInquiry,
        OrderDisplay,
        AdminRequest,
        AdminConfirm,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Home => "home",
            NewProducts => "new_products",
            BestSellers => "best_sellers",
            ProductDetail => "product_detail",
            SearchRequest => "search_request",
            SearchResults => "search_results",
            ShoppingCart => "shopping_cart",
            CustomerRegistration => "customer_registration",
            BuyRequest => "buy_request",
            BuyConfirm => "buy_confirm",
            OrderInquiry => "order_inquiry",
            OrderDisplay => "order_display",
            AdminRequest => "admin_request",
            AdminConfirm => "admin_confirm",
        }
    }

    /// TPC-W's limit on the 90th percentile of the response time (clause
    /// 5.1.1.2): 3 s, but 5 s for New Products, Best Sellers and Buy
    /// Confirm, 10 s for Search Results and 20 s for Admin Confirm.
    pub fn p90_limit(self) -> Duration {
        Duration::from_secs(match self {
            NewProducts | BestSellers | BuyConfirm => 5,
            SearchResults => 10,
            AdminConfirm => 20,
            _ => 3,
        })
    }

    /// Whether it can send statements: DBT-1 answers Search Request and
    /// Customer Registration without the database (Order Inquiry too, for
    /// a user not known as a customer).
    pub fn queries(self) -> bool {
        !matches!(self, SearchRequest | CustomerRegistration)
    }

    /// A browsing interaction (the other half of TPC-W's split orders).
    pub fn browsing(self) -> bool {
        self.index() <= SearchResults.index()
    }
}

/// Which matrix the users walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    Browsing,
    Shopping,
    Ordering,
    /// DBT-1's ordering matrix, with its typo.
    OrderingDbt1,
}

/// What `--mix` accepts, for messages.
pub const MIX_NAMES: &str = "browsing, shopping, ordering or ordering-dbt1";

impl Mix {
    pub fn parse(s: &str) -> Option<Mix> {
        Some(match s {
            "browsing" => Mix::Browsing,
            "shopping" => Mix::Shopping,
            "ordering" => Mix::Ordering,
            "ordering-dbt1" => Mix::OrderingDbt1,
            _ => return None,
        })
    }

    /// The cumulative thresholds of the matrix, row (from) by column (to).
    pub fn matrix(self) -> [[u16; N]; N] {
        let rows: &[(Interaction, &[(Interaction, u16)])] = match self {
            Mix::Browsing => &BROWSING,
            Mix::Shopping => &SHOPPING,
            Mix::Ordering | Mix::OrderingDbt1 => &ORDERING,
        };
        let mut m = [[0u16; N]; N];
        for (from, row) in rows {
            for &(to, t) in *row {
                m[from.index()][to.index()] = t;
            }
        }
        if self == Mix::OrderingDbt1 {
            m[ProductDetail.index()][SearchRequest.index()] = 8341;
            m[BuyRequest.index()][Home.index()] = 9452;
        }
        m
    }

    /// Transition probabilities: row `from`, column `to`.
    pub fn probabilities(self) -> [[f64; N]; N] {
        let m = self.matrix();
        let mut p = [[0.0; N]; N];
        for (i, row) in m.iter().enumerate() {
            let mut prev: i32 = -1;
            for to in DRAW_ORDER {
                let t = row[to.index()];
                if t > 0 {
                    p[i][to.index()] = f64::from(i32::from(t) - prev) / 10_000.0;
                    prev = i32::from(t);
                }
            }
        }
        p
    }

    /// The share of each interaction in a long walk (the stationary
    /// distribution of the chain), by power iteration.
    pub fn stationary(self) -> [f64; N] {
        let p = self.probabilities();
        let mut x = [1.0 / N as f64; N];
        for _ in 0..10_000 {
            let mut y = [0.0; N];
            for i in 0..N {
                for j in 0..N {
                    y[j] += x[i] * p[i][j];
                }
            }
            let diff: f64 = x.iter().zip(&y).map(|(a, b)| (a - b).abs()).sum();
            x = y;
            if diff < 1e-15 {
                break;
            }
        }
        x
    }
}

/// The next interaction after `from` on `matrix`.
pub fn next(matrix: &[[u16; N]; N], from: Interaction, rng: &mut Rng) -> Interaction {
    let r = rng.uniform(0, 9999) as u16;
    let row = &matrix[from.index()];
    for to in DRAW_ORDER {
        let t = row[to.index()];
        if t > 0 && r <= t {
            return to;
        }
    }
    Home
}

/// The order a draw tests a row's columns in, which fixes what each
/// cumulative threshold means: TPC-W's and DBT-1's (alphabetical by their
/// abbreviations).
const DRAW_ORDER: [Interaction; N] = [
    AdminConfirm,
    AdminRequest,
    BestSellers,
    BuyConfirm,
    BuyRequest,
    CustomerRegistration,
    Home,
    NewProducts,
    OrderDisplay,
    OrderInquiry,
    ProductDetail,
    SearchRequest,
    SearchResults,
    ShoppingCart,
];

/// TPC-W's NURand(A, x, y): `((rand(0, A) | rand(x, y)) % (y − x + 1)) + x`.
pub fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32) -> u32 {
    let y = y.max(x);
    ((rng.uniform(0, a) | rng.uniform(x, y)) % (y - x + 1)) + x
}

/// DBT-1's A for NURand over the customers (and, as DBT-1 uses it, for
/// the search strings): grows with the customer count.
pub fn nurand_a(customers: u64) -> u32 {
    match customers {
        0..10_000 => 1023,
        10_000..40_000 => 4095,
        40_000..160_000 => 16_383,
        160_000..640_000 => 65_535,
        640_000..2_560_000 => 262_143,
        2_560_000..10_240_000 => 1_048_575,
        10_240_000..40_960_000 => 4_194_303,
        40_960_000..163_840_000 => 16_777_215,
        _ => 67_108_863,
    }
}

type Row = (Interaction, &'static [(Interaction, u16)]);

// Rows and columns in [`DRAW_ORDER`].
const BROWSING: [Row; N] = [
    (AdminConfirm, &[(Home, 9877), (SearchRequest, 9999)]),
    (AdminRequest, &[(AdminConfirm, 8999), (Home, 9999)]),
    (
        BestSellers,
        &[
            (Home, 4607),
            (ProductDetail, 5259),
            (SearchRequest, 9942),
            (ShoppingCart, 9999),
        ],
    ),
    (BuyConfirm, &[(Home, 342), (SearchRequest, 9999)]),
    (
        BuyRequest,
        &[(BuyConfirm, 9199), (Home, 9595), (ShoppingCart, 9999)],
    ),
    (
        CustomerRegistration,
        &[(BuyRequest, 9145), (Home, 9619), (SearchRequest, 9999)],
    ),
    (
        Home,
        &[
            (BestSellers, 3792),
            (NewProducts, 7585),
            (OrderInquiry, 7688),
            (SearchRequest, 9559),
            (ShoppingCart, 9999),
        ],
    ),
    (
        NewProducts,
        &[
            (Home, 299),
            (ProductDetail, 9867),
            (SearchRequest, 9941),
            (ShoppingCart, 9999),
        ],
    ),
    (OrderDisplay, &[(Home, 69), (SearchRequest, 9999)]),
    (
        OrderInquiry,
        &[(Home, 523), (OrderDisplay, 8856), (SearchRequest, 9999)],
    ),
    (
        ProductDetail,
        &[
            (AdminRequest, 47),
            (Home, 8346),
            (ProductDetail, 9749),
            (SearchRequest, 9890),
            (ShoppingCart, 9999),
        ],
    ),
    (
        SearchRequest,
        &[(Home, 788), (SearchResults, 9955), (ShoppingCart, 9999)],
    ),
    (
        SearchResults,
        &[
            (Home, 3674),
            (ProductDetail, 9868),
            (SearchRequest, 9942),
            (ShoppingCart, 9999),
        ],
    ),
    (
        ShoppingCart,
        &[
            (CustomerRegistration, 4099),
            (Home, 8883),
            (ShoppingCart, 9999),
        ],
    ),
];

const SHOPPING: [Row; N] = [
    (AdminConfirm, &[(Home, 9952), (SearchRequest, 9999)]),
    (AdminRequest, &[(AdminConfirm, 8999), (Home, 9999)]),
    (
        BestSellers,
        &[
            (Home, 167),
            (ProductDetail, 472),
            (SearchRequest, 9927),
            (ShoppingCart, 9999),
        ],
    ),
    (BuyConfirm, &[(Home, 84), (SearchRequest, 9999)]),
    (
        BuyRequest,
        &[(BuyConfirm, 4614), (Home, 6545), (ShoppingCart, 9999)],
    ),
    (
        CustomerRegistration,
        &[(BuyRequest, 8666), (Home, 8760), (SearchRequest, 9999)],
    ),
    (
        Home,
        &[
            (BestSellers, 3124),
            (NewProducts, 6249),
            (OrderInquiry, 6718),
            (SearchRequest, 7026),
            (ShoppingCart, 9999),
        ],
    ),
    (
        NewProducts,
        &[
            (Home, 156),
            (ProductDetail, 9735),
            (SearchRequest, 9784),
            (ShoppingCart, 9999),
        ],
    ),
    (OrderDisplay, &[(Home, 69), (SearchRequest, 9999)]),
    (
        OrderInquiry,
        &[(Home, 72), (OrderDisplay, 8872), (SearchRequest, 9999)],
    ),
    (
        ProductDetail,
        &[
            (AdminRequest, 58),
            (Home, 832),
            (ProductDetail, 1288),
            (SearchRequest, 8603),
            (ShoppingCart, 9999),
        ],
    ),
    (
        SearchRequest,
        &[(Home, 635), (SearchResults, 9135), (ShoppingCart, 9999)],
    ),
    (
        SearchResults,
        &[
            (Home, 2657),
            (ProductDetail, 9294),
            (SearchRequest, 9304),
            (ShoppingCart, 9999),
        ],
    ),
    (
        ShoppingCart,
        &[
            (CustomerRegistration, 2585),
            (Home, 9552),
            (ShoppingCart, 9999),
        ],
    ),
];

/// TPC-W's ordering matrix (see the module doc for DBT-1's).
const ORDERING: [Row; N] = [
    (AdminConfirm, &[(Home, 8348), (SearchRequest, 9999)]),
    (AdminRequest, &[(AdminConfirm, 8999), (Home, 9999)]),
    (
        BestSellers,
        &[
            (Home, 1),
            (ProductDetail, 333),
            (SearchRequest, 9998),
            (ShoppingCart, 9999),
        ],
    ),
    (BuyConfirm, &[(Home, 2), (SearchRequest, 9999)]),
    (
        BuyRequest,
        &[(BuyConfirm, 7999), (Home, 9453), (ShoppingCart, 9999)],
    ),
    (
        CustomerRegistration,
        &[(BuyRequest, 9899), (Home, 9901), (SearchRequest, 9999)],
    ),
    (
        Home,
        &[
            (BestSellers, 499),
            (NewProducts, 999),
            (OrderInquiry, 1269),
            (SearchRequest, 1295),
            (ShoppingCart, 9999),
        ],
    ),
    (
        NewProducts,
        &[
            (Home, 504),
            (ProductDetail, 9942),
            (SearchRequest, 9976),
            (ShoppingCart, 9999),
        ],
    ),
    (OrderDisplay, &[(Home, 9939), (SearchRequest, 9999)]),
    (
        OrderInquiry,
        &[(Home, 1168), (OrderDisplay, 9968), (SearchRequest, 9999)],
    ),
    (
        ProductDetail,
        &[
            (AdminRequest, 99),
            (Home, 3750),
            (ProductDetail, 5621),
            (SearchRequest, 6341),
            (ShoppingCart, 9999),
        ],
    ),
    (
        SearchRequest,
        &[(Home, 815), (SearchResults, 9815), (ShoppingCart, 9999)],
    ),
    (
        SearchResults,
        &[
            (Home, 486),
            (ProductDetail, 7817),
            (SearchRequest, 9998),
            (ShoppingCart, 9999),
        ],
    ),
    (
        ShoppingCart,
        &[
            (CustomerRegistration, 9499),
            (Home, 9918),
            (ShoppingCart, 9999),
        ],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn browse_share(m: Mix) -> f64 {
        let s = m.stationary();
        100.0
            * Interaction::ALL
                .iter()
                .filter(|i| i.browsing())
                .map(|i| s[i.index()])
                .sum::<f64>()
    }

    #[test]
    fn the_mixes_split_as_tpcw_says() {
        // TPC-W clause 5.2.2: browsing 95/5, shopping 80/20, ordering 50/50.
        assert!((browse_share(Mix::Browsing) - 95.0).abs() < 0.05);
        assert!((browse_share(Mix::Shopping) - 80.0).abs() < 0.05);
        assert!((browse_share(Mix::Ordering) - 50.0).abs() < 0.05);
        // DBT-1's typo: 56/44.
        let dbt1 = browse_share(Mix::OrderingDbt1);
        assert!((dbt1 - 56.2).abs() < 0.1, "{dbt1}");
        // A few of TPC-W's published shares (shopping mix, clause 5.2.2).
        let s = Mix::Shopping.stationary();
        assert!((s[Home.index()] - 0.16).abs() < 0.0005);
        assert!((s[BuyConfirm.index()] - 0.012).abs() < 0.0005);
        assert!((s[SearchRequest.index()] - 0.20).abs() < 0.0005);
    }

    #[test]
    fn rows_are_complete_and_increasing() {
        for mix in [
            Mix::Browsing,
            Mix::Shopping,
            Mix::Ordering,
            Mix::OrderingDbt1,
        ] {
            for (i, row) in mix.probabilities().iter().enumerate() {
                let sum: f64 = row.iter().sum();
                assert!((sum - 1.0).abs() < 1e-9, "{mix:?} row {i}: {sum}");
                assert!(row.iter().all(|&p| p >= 0.0));
            }
        }
    }

    #[test]
    fn nurand_stays_in_range() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let v = nurand(&mut rng, 1023, 1, 2880);
            assert!((1..=2880).contains(&v));
        }
        assert_eq!(nurand_a(28_800), 4095);
        assert_eq!(nurand_a(288_000), 65_535);
    }
}
