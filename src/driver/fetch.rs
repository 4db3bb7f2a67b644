//! Values a workload reads back from a query: the few columns of the first
//! few rows it asks for, typed as it asks.
//!
//! sysbench's and Super Smack's statements never look at what they
//! return, so [`Connection::execute`](super::Connection::execute) counts
//! rows and discards them, allocation-free. Workloads whose next step
//! depends on a result (DBT-1: the item ids of the page a user just saw,
//! the cart's lines at checkout) call
//! [`Connection::execute_fetch`](super::Connection::execute_fetch) instead,
//! with a [`Fetch`] that says which columns to keep, as which type, and
//! from how many rows; the other rows are still fetched (and counted) and
//! dropped. The sysbench path does not change.

use super::Value;

/// The type a fetched column is handed back as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// An integer (a DECIMAL or a float with a fraction is truncated;
    /// unparsable values and values past an i64 are NULL).
    Int,
    Float,
    Text,
}

/// What to keep of a result set, and (after execution) what was kept.
#[derive(Debug, Clone, Default)]
pub struct Fetch {
    /// The types of the leading columns to keep: column `i` of a row is
    /// kept as `types[i]`; columns after these are dropped.
    pub types: Vec<Col>,
    /// Rows to keep at most.
    pub max_rows: usize,
    /// The kept values, row after row (`types.len()` per row).
    pub values: Vec<Value>,
}

impl Fetch {
    pub fn new(types: &[Col], max_rows: usize) -> Fetch {
        Fetch {
            types: types.to_vec(),
            max_rows,
            values: Vec::with_capacity(types.len() * max_rows.min(64)),
        }
    }

    /// Asks for other columns and rows, dropping what was kept (the
    /// buffers stay).
    pub fn reset(&mut self, types: &[Col], max_rows: usize) {
        self.types.clear();
        self.types.extend_from_slice(types);
        self.max_rows = max_rows;
        self.values.clear();
    }

    /// Rows kept.
    pub fn rows(&self) -> usize {
        if self.types.is_empty() {
            0
        } else {
            self.values.len() / self.types.len()
        }
    }

    /// Whether another row is wanted.
    pub fn wants_row(&self) -> bool {
        !self.types.is_empty() && self.rows() < self.max_rows
    }

    /// The value of column `col` of kept row `row`.
    pub fn get(&self, row: usize, col: usize) -> &Value {
        &self.values[row * self.types.len() + col]
    }

    /// Column `col` of row `row` as an integer (None for NULL or out of range).
    pub fn int(&self, row: usize, col: usize) -> Option<i64> {
        if row >= self.rows() {
            return None;
        }
        match self.get(row, col) {
            Value::Int(v) => Some(*v),
            Value::Float(v) => Some(*v as i64),
            _ => None,
        }
    }

    /// Column `col` of row `row` as a number (None for NULL or out of range).
    pub fn float(&self, row: usize, col: usize) -> Option<f64> {
        if row >= self.rows() {
            return None;
        }
        match self.get(row, col) {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            _ => None,
        }
    }

    /// Column `col` of row `row` as text (None for NULL or out of range).
    pub fn text(&self, row: usize, col: usize) -> Option<&str> {
        if row >= self.rows() {
            return None;
        }
        match self.get(row, col) {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// Keeps one row given as text (how the wire protocols' text format
    /// and the drivers' text rows carry it): each kept column is parsed
    /// as its type. Missing columns are NULL.
    pub fn push_text_row<S: AsRef<str>>(&mut self, row: &[Option<S>]) {
        self.push_text_cells(|i| row.get(i).and_then(|v| v.as_ref()).map(|s| s.as_ref()));
    }

    /// Keeps one row given as text, column `i` as `cell(i)` (None for NULL
    /// or missing): for a driver that keeps its rows' text in one buffer.
    pub fn push_text_cells<'s>(&mut self, cell: impl Fn(usize) -> Option<&'s str>) {
        if !self.wants_row() {
            return;
        }
        for (i, &t) in self.types.iter().enumerate() {
            self.values.push(typed(t, cell(i)));
        }
    }

    /// Keeps one row of typed values (an embedded engine's), converting
    /// each kept column to its type.
    pub fn push_row(&mut self, mut value: impl FnMut(usize) -> Value) {
        if !self.wants_row() {
            return;
        }
        for i in 0..self.types.len() {
            let v = value(i);
            let t = self.types[i];
            self.values.push(match (t, v) {
                (_, Value::Null) => Value::Null,
                (Col::Int, Value::Int(x)) => Value::Int(x),
                (Col::Int, Value::Float(x)) => int_of(x),
                (Col::Float, Value::Int(x)) => Value::Float(x as f64),
                (Col::Float, Value::Float(x)) => Value::Float(x),
                (Col::Text, Value::Text(s)) => Value::Text(s),
                (Col::Text, Value::Int(x)) => Value::Text(x.to_string()),
                (Col::Text, Value::Float(x)) => Value::Text(x.to_string()),
                (t, Value::Text(s)) => typed(t, Some(&s)),
            });
        }
    }
}

/// A text value as type `t`.
fn typed(t: Col, v: Option<&str>) -> Value {
    let Some(s) = v else {
        return Value::Null;
    };
    match t {
        Col::Text => Value::Text(s.to_owned()),
        Col::Int => {
            let s = s.trim();
            if s.contains(['e', 'E']) {
                // A float's text with an exponent ("-3.25e10").
                return s.parse().map_or(Value::Null, int_of);
            }
            // A DECIMAL's text ("12.00") is cut at its point, exactly.
            let whole = s.split('.').next().unwrap_or(s);
            whole.parse().map_or(Value::Null, Value::Int)
        }
        Col::Float => s.trim().parse().map_or(Value::Null, Value::Float),
    }
}

/// A float as an integer: truncated, NULL past an i64 (or NaN).
fn int_of(x: f64) -> Value {
    // i64::MAX as f64 is 2^63, itself out of range.
    if x.is_finite() && x >= i64::MIN as f64 && x < i64::MAX as f64 {
        Value::Int(x.trunc() as i64)
    } else {
        Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rows_are_typed_and_capped() {
        let mut f = Fetch::new(&[Col::Int, Col::Text, Col::Float], 2);
        f.push_text_row(&[Some("7"), Some("seven"), Some("1.50"), Some("dropped")]);
        f.push_text_row(&[Some("12.00"), None, Some("x")]);
        f.push_text_row(&[Some("9"), Some("not kept"), Some("1")]);
        assert_eq!(f.rows(), 2);
        assert_eq!(f.int(0, 0), Some(7));
        assert_eq!(f.text(0, 1), Some("seven"));
        assert_eq!(f.float(0, 2), Some(1.5));
        assert_eq!(f.int(1, 0), Some(12));
        assert_eq!(f.text(1, 1), None);
        assert_eq!(f.float(1, 2), None);
        assert_eq!(f.int(2, 0), None);
        f.reset(&[Col::Int], 1);
        assert_eq!(f.rows(), 0);
        f.push_row(|_| Value::Float(3.9));
        assert_eq!(f.int(0, 0), Some(3));
        // Exponents, and floats past an integer, as text and as values.
        let mut g = Fetch::new(&[Col::Int; 4], 2);
        g.push_text_row(&[Some("-3.25e10"), Some("1e300"), Some("-0.5"), Some("1E2")]);
        g.push_row(|i| Value::Float([-3.25e10, 1e300, -0.5, f64::NAN][i]));
        let got: Vec<_> = (0..2)
            .flat_map(|r| (0..4).map(move |c| (r, c)))
            .map(|(r, c)| g.int(r, c))
            .collect();
        assert_eq!(
            got,
            [
                Some(-32_500_000_000),
                None,
                Some(0),
                Some(100),
                Some(-32_500_000_000),
                None,
                Some(0),
                None
            ]
        );
    }
}
