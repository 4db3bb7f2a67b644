//! Name–value pairs that keep their order: a workload's options in the
//! order it declares them, a server's settings in the order it reports
//! them. Written as a JSON object (keys in that order), read back in the
//! order of the file.

use std::fmt;
use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Pairs in order, as a JSON object. A name given twice keeps both pairs
/// in memory; the written object then repeats the key (JSON readers keep
/// the last), so producers give each name once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

/// Text settings or options.
pub type Pairs = OrderedMap<String>;

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V> OrderedMap<V> {
    /// The value of `name` (the last one, if given twice).
    pub fn get(&self, name: &str) -> Option<&V> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl OrderedMap<u64> {
    /// Adds `n` to the count of `name`, which starts at 0.
    pub fn add(&mut self, name: &str, n: u64) {
        match self.0.iter_mut().find(|(k, _)| k == name) {
            Some((_, c)) => *c += n,
            None => self.0.push((name.to_string(), n)),
        }
    }
}

impl<V> FromIterator<(String, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        OrderedMap(iter.into_iter().collect())
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for InOrder<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut pairs = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(pair) = a.next_entry()? {
                    pairs.push(pair);
                }
                Ok(OrderedMap(pairs))
            }
        }
        d.deserialize_map(InOrder(PhantomData))
    }
}

impl<V: JsonSchema> JsonSchema for OrderedMap<V> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Map_of_{}", V::schema_name()).into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": g.subschema_for::<V>(),
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_both_ways() {
        let m: Pairs = [("b", "1"), ("a", "2")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"b":"1","a":"2"}"#);
        let back: Pairs = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.get("a").map(String::as_str), Some("2"));
    }
}
