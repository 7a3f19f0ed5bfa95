//! Reading JSON that arrives from outside (callbacks) strictly: a key given
//! twice in one object, at any depth, is refused. serde keeps the last
//! copy while other readers keep the first, so a repeated key means two
//! readers of one body can disagree on what it says.

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess};
use std::collections::HashSet;
use std::fmt;

/// Parses `bytes` as `T` once they are known to repeat no key; the error
/// is a sentence naming what is wrong.
pub(crate) fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Walk.deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

/// Walks any JSON value without keeping it, failing on a repeated key.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key {key:?} appears twice in one object"
                )));
            }
            map.next_value_seed(Walk)?;
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"x":[{"callback_query":{"data":"a:1","data":"d:1"}}]}"#,
            r#"{"type":3,"typ\u0065":1}"#,
        ] {
            let e = from_slice::<Value>(text.as_bytes()).unwrap_err();
            assert!(e.contains("appears twice"), "{text}: {e}");
        }
        let v: Value = from_slice(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).unwrap();
        assert_eq!(v["b"][1]["a"], 2);
        assert!(from_slice::<Value>(b"{").is_err());
        assert!(from_slice::<Value>(b"{} x").is_err());
    }
}
