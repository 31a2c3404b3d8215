//! Every key a configuration file may set, read off the file's own serde structs: the
//! configuration reference in the book is checked against [`config_keys`], so that a key added
//! to a struct without a line in the reference fails a test rather than staying unknown.
//!
//! The structs are walked by deserializing them from a [`KeyTracer`], a deserializer that
//! answers every struct with the field names serde's derive hands it and records each of them
//! under the path it was reached by. Tables of names (`[providers.NAME]`) are entered once,
//! under the name `NAME`; lists of tables (`[[hooks.PreToolUse]]`) once, under their own key.

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use crate::load::FileConfig;

/// The name a table of names is entered under (`providers.NAME.api`).
pub const NAME: &str = "NAME";

/// Every key path of a configuration file, dotted (`providers.NAME.api`,
/// `hooks.PreToolUse.matcher`, `web.search.provider`), leaves only: a table's own path
/// (`web.search`) is not listed, its keys are.
pub fn config_keys() -> Vec<String> {
    let seen = RefCell::new(BTreeSet::new());
    // The walk answers every field, so it cannot fail; should a struct refuse the tracer's
    // values some day, the keys found up to there are still returned and the check shows the rest.
    let _ = <FileConfig as de::Deserialize>::deserialize(KeyTracer {
        path: String::new(),
        seen: &seen,
    });
    let seen = seen.into_inner();
    seen.iter()
        .filter(|key| {
            let prefix = format!("{key}.");
            !seen.iter().any(|other| other.starts_with(&prefix))
        })
        .cloned()
        .collect()
}

/// The deserializer that records the fields it is asked for (see the module's comment).
struct KeyTracer<'a> {
    path: String,
    seen: &'a RefCell<BTreeSet<String>>,
}

impl<'a> KeyTracer<'a> {
    fn child(&self, key: &str) -> KeyTracer<'a> {
        let path = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        };
        KeyTracer {
            path,
            seen: self.seen,
        }
    }

    fn same(&self) -> KeyTracer<'a> {
        KeyTracer {
            path: self.path.clone(),
            seen: self.seen,
        }
    }
}

/// toml's `Spanned<T>` deserializes as a struct of this name: its value is `T` at the same path.
const SPANNED: &str = "$__serde_spanned_private_Spanned";

/// The entries a map or struct is answered with: `(key, path of its value, is a position)`.
struct Entries<'a> {
    entries: std::vec::IntoIter<(&'static str, Option<KeyTracer<'a>>)>,
    value: Option<Option<KeyTracer<'a>>>,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = de::value::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.entries.next() {
            Some((key, tracer)) => {
                self.value = Some(tracer);
                // Borrowed: toml's span keys are read as borrowed strings.
                seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value.take().flatten() {
            Some(tracer) => seed.deserialize(tracer),
            // A span's start or end: any number.
            None => seed.deserialize(0_u64.into_deserializer()),
        }
    }
}

/// A list answered with one element, at the list's own path.
struct OneElement<'a>(Option<KeyTracer<'a>>);

impl<'de> de::SeqAccess<'de> for OneElement<'_> {
    type Error = de::value::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0
            .take()
            .map(|tracer| seed.deserialize(tracer))
            .transpose()
    }
}

macro_rules! answer_with {
    ($($method:ident => $visit:ident($($value:expr)?)),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            visitor.$visit($($value)?)
        })*
    };
}

impl<'de> de::Deserializer<'de> for KeyTracer<'_> {
    type Error = de::value::Error;

    answer_with! {
        deserialize_any => visit_str("x"),
        deserialize_bool => visit_bool(false),
        deserialize_i8 => visit_i64(0),
        deserialize_i16 => visit_i64(0),
        deserialize_i32 => visit_i64(0),
        deserialize_i64 => visit_i64(0),
        deserialize_u8 => visit_u64(0),
        deserialize_u16 => visit_u64(0),
        deserialize_u32 => visit_u64(0),
        deserialize_u64 => visit_u64(0),
        deserialize_f32 => visit_f64(0.0),
        deserialize_f64 => visit_f64(0.0),
        deserialize_char => visit_char('x'),
        deserialize_str => visit_str("x"),
        deserialize_string => visit_str("x"),
        deserialize_bytes => visit_bytes(b"x"),
        deserialize_byte_buf => visit_bytes(b"x"),
        deserialize_unit => visit_unit(),
        deserialize_identifier => visit_str("x"),
        deserialize_ignored_any => visit_unit(),
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_seq(OneElement(Some(self)))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let entry = self.child(NAME);
        visitor.visit_map(Entries {
            entries: vec![(NAME, Some(entry))].into_iter(),
            value: None,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let entries: Vec<_> = if name == SPANNED {
            // [start, end, value]: the value is the spanned one, at this path.
            fields
                .iter()
                .enumerate()
                .map(|(index, field)| (*field, (index == 2).then(|| self.same())))
                .collect()
        } else {
            fields
                .iter()
                .map(|field| {
                    let child = self.child(field);
                    self.seen.borrow_mut().insert(child.path.clone());
                    (*field, Some(child))
                })
                .collect()
        };
        visitor.visit_map(Entries {
            entries: entries.into_iter(),
            value: None,
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let first = variants.first().copied().unwrap_or_default();
        visitor.visit_enum(first.into_deserializer())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_of_every_table_are_found() {
        let keys = config_keys();
        for key in [
            "limits.max_result_chars",
            "providers.NAME.api",
            "providers.NAME.pricing.input",
            "hooks.PreToolUse.matcher",
            "web.search.provider",
            "web.resolve",
            "agents.NAME.direct_mcp_servers.NAME.command",
            "mcp_servers.NAME.type",
        ] {
            assert!(
                keys.iter().any(|k| k == key),
                "{key} missing from {keys:#?}"
            );
        }
        assert!(
            !keys.iter().any(|k| k == "web.search"),
            "a table is not a leaf"
        );
    }
}
