//! The value types of the study file: the small forms a person writes (a
//! duration as `30` or `"10m"`, a CPU set as `[0, 1]` or `"0-1"`, client
//! counts as `"pow2 1..1024"`, …), each deserialised with the forms it
//! accepts named when given something else; `raw.rs` holds the tables
//! that use them.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

/// A table's entries in file order, keys and values with their spans (for
/// settings and options, whose names are the user's, not fields of ours).
#[derive(Debug)]
pub(super) struct Ordered<V>(pub Vec<(Spanned<String>, Spanned<V>)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for V_<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of name = value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = m.next_entry()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(V_(PhantomData))
    }
}

/// A name, or a list of names (`baseline = "a"`, `baseline = ["a", "b"]`).
#[derive(Debug)]
pub(super) struct Names(pub Vec<String>);

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a series name, or a list of them")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Names, E> {
                Ok(Names(vec![v.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Names, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = a.next_element::<String>()? {
                    out.push(n);
                }
                Ok(Names(out))
            }
        }
        d.deserialize_any(V_)
    }
}

/// `repeats = 3`, or `repeats = { min = 3, max = 10, precision = "3%" }`.
#[derive(Debug)]
pub(super) enum RawRepeats {
    Count(i64),
    Adaptive(RawAdaptive),
}

const REPEATS_EXPECTED: &str =
    "a number of repeats (e.g. 3), or { min = 3, max = 10, precision = \"3%\" }";

impl<'de> Deserialize<'de> for RawRepeats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = RawRepeats;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(REPEATS_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawRepeats, E> {
                Ok(RawRepeats::Count(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawRepeats, E> {
                Ok(RawRepeats::Count(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<RawRepeats, A::Error> {
                RawAdaptive::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(RawRepeats::Adaptive)
            }
        }
        d.deserialize_any(V_)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAdaptive {
    pub min: Option<i64>,
    pub max: i64,
    pub precision: Percent,
}

/// A percentage: `"3%"`, or a number of percent (`3`, `0.5`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Percent(pub f64);

const PERCENT_EXPECTED: &str = "a percentage such as \"3%\" (or a number of percent)";

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = Percent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(PERCENT_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Percent, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Percent, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Percent, E> {
                if v.is_finite() && (0.0..100.0).contains(&v) {
                    Ok(Percent(v / 100.0))
                } else {
                    Err(E::custom(format!(
                        "bad percentage {v}: expected {PERCENT_EXPECTED}, from 0 up to 100"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Percent, E> {
                let n = v.trim().strip_suffix('%').unwrap_or(v).trim();
                match n.parse::<f64>() {
                    Ok(x) => self.visit_f64(x),
                    Err(_) => Err(E::custom(format!(
                        "bad percentage '{v}': expected {PERCENT_EXPECTED}"
                    ))),
                }
            }
        }
        d.deserialize_any(V_)
    }
}

/// A duration: seconds as a number (`30`, `0.5`) or a string with a unit
/// (`"500ms"`, `"30s"`, `"10m"`, `"1h"`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Dur(pub Duration);

const DUR_EXPECTED: &str =
    "a duration: seconds as a number, or a string such as \"500ms\", \"30s\", \"10m\", \"1h\"";

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(DUR_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                if v.is_finite() && (0.0..1e9).contains(&v) {
                    Ok(Dur(Duration::from_secs_f64(v)))
                } else {
                    Err(E::custom(format!(
                        "bad duration {v}: expected {DUR_EXPECTED}, not negative"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                crate::util::duration::parse(v).map(Dur).map_err(E::custom)
            }
        }
        d.deserialize_any(V_)
    }
}

/// A server setting's value: strings as they are, numbers in decimal,
/// booleans as `on` / `off` (which both servers accept).
#[derive(Debug, Clone)]
pub(super) struct SettingValue(pub String);

impl<'de> Deserialize<'de> for SettingValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = SettingValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a setting value: a string, a number or a boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SettingValue, E> {
                Ok(SettingValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SettingValue, E> {
                Ok(SettingValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SettingValue, E> {
                Ok(SettingValue(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<SettingValue, E> {
                Ok(SettingValue(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<SettingValue, E> {
                Ok(SettingValue(if v { "on" } else { "off" }.to_string()))
            }
        }
        d.deserialize_any(V_)
    }
}

/// A workload option's value, rendered as the command line would give it:
/// integers in decimal, booleans as `on` / `off`, strings as they are.
#[derive(Debug, Clone)]
pub(super) struct OptValue(pub String);

impl<'de> Deserialize<'de> for OptValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = OptValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an option value: a number, a boolean or a string")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<OptValue, E> {
                Ok(OptValue(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OptValue, E> {
                Ok(OptValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<OptValue, E> {
                Ok(OptValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<OptValue, E> {
                Ok(OptValue(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<OptValue, E> {
                Ok(OptValue(if v { "on" } else { "off" }.to_string()))
            }
        }
        d.deserialize_any(V_)
    }
}

/// One CPU set: `[0, 1]` or the kernel's list syntax `"0-1,3"`.
#[derive(Debug, Clone)]
pub(super) struct CpuSet(pub Vec<usize>);

const CPUS_EXPECTED: &str =
    "a CPU set: an array of CPU numbers such as [0, 1], or a string such as \"0-1\"";

impl<'de> Deserialize<'de> for CpuSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = CpuSet;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(CPUS_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CpuSet, E> {
                crate::server::parse_cpu_list(v)
                    .map(CpuSet)
                    .map_err(|e| E::custom(e.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CpuSet, E> {
                Err(E::custom(format!(
                    "{v} is not {CPUS_EXPECTED}; `cpus` is a list of sets, so pinning to CPU {v} alone is [{v}]"
                )))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<CpuSet, A::Error> {
                let mut cpus = Vec::new();
                while let Some(c) = s.next_element::<usize>()? {
                    cpus.push(c);
                }
                if cpus.is_empty() {
                    return Err(de::Error::custom("an empty CPU set: name at least one CPU"));
                }
                cpus.sort_unstable();
                cpus.dedup();
                Ok(CpuSet(cpus))
            }
        }
        d.deserialize_any(V_)
    }
}

/// One element of a client list: a count or a range expression.
#[derive(Debug, Clone)]
pub(super) enum ClientTerm {
    Count(i64),
    Expr(String),
}

/// `clients`: a count, an expression string, or an array of both. Elements
/// of an array keep their spans so an error points at the bad one.
#[derive(Debug, Clone)]
pub(super) struct ClientList(pub Vec<(Option<Range<usize>>, ClientTerm)>);

const CLIENTS_EXPECTED: &str = "client counts: an integer, an array such as [1, 2, 4], or a string such as \"1,5,10..100 step 10\" or \"pow2 1..1024\"";

impl<'de> Deserialize<'de> for ClientTerm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = ClientTerm;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(CLIENTS_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ClientTerm, E> {
                Ok(ClientTerm::Count(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ClientTerm, E> {
                Ok(ClientTerm::Count(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ClientTerm, E> {
                Ok(ClientTerm::Expr(v.to_string()))
            }
        }
        d.deserialize_any(V_)
    }
}

impl<'de> Deserialize<'de> for ClientList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = ClientList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(CLIENTS_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ClientList, E> {
                Ok(ClientList(vec![(None, ClientTerm::Count(v))]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ClientList, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ClientList, E> {
                Ok(ClientList(vec![(None, ClientTerm::Expr(v.to_string()))]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<ClientList, A::Error> {
                let mut terms = Vec::new();
                while let Some(t) = s.next_element::<Spanned<ClientTerm>>()? {
                    terms.push((Some(t.span()), t.into_inner()));
                }
                Ok(ClientList(terms))
            }
        }
        d.deserialize_any(V_)
    }
}

/// One element of a rate list: a number or an expression.
#[derive(Debug, Clone)]
pub(super) enum RateTerm {
    Number(f64),
    Expr(String),
}

/// `rates`: a number, an expression string, or an array of both; array
/// elements keep their spans.
#[derive(Debug, Clone)]
pub(super) struct RateList(pub Vec<(Option<Range<usize>>, RateTerm)>);

const RATES_EXPECTED: &str = "rates: a number of transactions per second, an array such as [1000, 2000], or a string such as \"1000..10000 step 1000\" or \"10%..100% of peak step 10%\"";

impl<'de> Deserialize<'de> for RateTerm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = RateTerm;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(RATES_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RateTerm, E> {
                Ok(RateTerm::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RateTerm, E> {
                Ok(RateTerm::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RateTerm, E> {
                Ok(RateTerm::Number(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateTerm, E> {
                Ok(RateTerm::Expr(v.to_string()))
            }
        }
        d.deserialize_any(V_)
    }
}

impl<'de> Deserialize<'de> for RateList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = RateList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(RATES_EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RateList, E> {
                Ok(RateList(vec![(None, RateTerm::Number(v as f64))]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RateList, E> {
                Ok(RateList(vec![(None, RateTerm::Number(v as f64))]))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RateList, E> {
                Ok(RateList(vec![(None, RateTerm::Number(v))]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateList, E> {
                Ok(RateList(vec![(None, RateTerm::Expr(v.to_string()))]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<RateList, A::Error> {
                let mut terms = Vec::new();
                while let Some(t) = s.next_element::<Spanned<RateTerm>>()? {
                    terms.push((Some(t.span()), t.into_inner()));
                }
                Ok(RateList(terms))
            }
        }
        d.deserialize_any(V_)
    }
}

/// `sqlite = "path"` or `sqlite = true` (a temporary database).
#[derive(Debug, Clone)]
pub(super) enum SqliteSpec {
    Temporary,
    Path(String),
}

impl<'de> Deserialize<'de> for SqliteSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl Visitor<'_> for V_ {
            type Value = SqliteSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a database file path, or true for a temporary database")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<SqliteSpec, E> {
                if v {
                    Ok(SqliteSpec::Temporary)
                } else {
                    Err(E::custom("sqlite = false names no database: give a file path, or true for a temporary database"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SqliteSpec, E> {
                if v.is_empty() {
                    Err(E::custom(
                        "an empty path: give a file path, or true for a temporary database",
                    ))
                } else {
                    Ok(SqliteSpec::Path(v.to_string()))
                }
            }
        }
        d.deserialize_any(V_)
    }
}

/// A list of names as an array of strings or one comma-separated string.
#[derive(Debug, Clone)]
pub(super) struct NameList(pub Vec<String>);

impl<'de> Deserialize<'de> for NameList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V_;
        impl<'de> Visitor<'de> for V_ {
            type Value = NameList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of names, or one comma-separated string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NameList, E> {
                Ok(NameList(
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<NameList, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = s.next_element::<String>()? {
                    names.push(n);
                }
                Ok(NameList(names))
            }
        }
        d.deserialize_any(V_)
    }
}

/// `ps_mode`: the statement protocol of a PostgreSQL or MySQL target.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum PsModeName {
    Auto,
    Disable,
}
