//! List responses: reading their entries and keeping the ones a caller may see.
//!
//! Only each entry's name is parsed; kept entries are copied byte for byte, so a 10,000-entry
//! page costs one pass and no re-serialization of what passes through.

use super::json;
use super::{Namespace, OperationId, TableIdent};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use thiserror::Error;

/// The four list operations and the key their response lists under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    Namespaces,
    Tables,
    Views,
    Functions,
}

impl ListKind {
    pub fn for_operation(op: OperationId) -> Option<Self> {
        match op {
            OperationId::ListNamespaces => Some(Self::Namespaces),
            OperationId::ListTables => Some(Self::Tables),
            OperationId::ListViews => Some(Self::Views),
            OperationId::ListFunctions => Some(Self::Functions),
            _ => None,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::Tables | Self::Views | Self::Functions => "identifiers",
        }
    }
}

/// One listed object, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Namespace(Namespace),
    Object(TableIdent),
}

/// A response icegate must filter but cannot read (502, never passed through).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ListError {
    #[error("upstream list response is not valid: {0}")]
    Invalid(String),
    #[error("upstream list response has no `{0}` array")]
    MissingList(&'static str),
}

/// A filtered page: the kept entries raw, the upstream's token, the rest of the envelope raw.
#[derive(Debug)]
pub struct ListPage {
    kept: Vec<Box<RawValue>>,
    next_page_token: Option<String>,
    others: BTreeMap<String, Box<RawValue>>,
    hidden: usize,
}

const TOKEN_KEY: &str = "next-page-token";

impl ListPage {
    pub fn visible(&self) -> impl Iterator<Item = &RawValue> {
        self.kept.iter().map(|b| &**b)
    }

    /// The upstream's `next-page-token` (absent and `null` are both none).
    pub fn next_page_token(&self) -> Option<&str> {
        self.next_page_token.as_deref()
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The response to send: the kept entries, the other fields as received, and
    /// `next-page-token` replaced by `next_page_token` (omitted when `None`).
    pub fn render(&self, kind: ListKind, next_page_token: Option<&str>) -> Vec<u8> {
        let size: usize = self.kept.iter().map(|r| r.get().len() + 1).sum();
        let mut out = Vec::with_capacity(size + 64);
        out.push(b'{');
        let mut first = true;
        let mut field = |out: &mut Vec<u8>, key: &str, value: &[u8]| {
            if !first {
                out.push(b',');
            }
            first = false;
            // keys came from the upstream's JSON and are re-escaped by serde_json
            out.extend_from_slice(serde_json::Value::from(key).to_string().as_bytes());
            out.push(b':');
            out.extend_from_slice(value);
        };
        for (k, v) in &self.others {
            field(&mut out, k, v.get().as_bytes());
        }
        let mut list = Vec::with_capacity(size + 2);
        list.push(b'[');
        for (i, entry) in self.kept.iter().enumerate() {
            if i > 0 {
                list.push(b',');
            }
            list.extend_from_slice(entry.get().as_bytes());
        }
        list.push(b']');
        field(&mut out, kind.key(), &list);
        if let Some(token) = next_page_token {
            field(&mut out, TOKEN_KEY, serde_json::Value::from(token).to_string().as_bytes());
        }
        out.push(b'}');
        out
    }
}

#[derive(Deserialize)]
struct Ident {
    namespace: Vec<String>,
    name: String,
}

fn entry(kind: ListKind, raw: &RawValue, separators: &[String]) -> Option<Entry> {
    match kind {
        ListKind::Namespaces => {
            let levels: Vec<String> = serde_json::from_str(raw.get()).ok()?;
            Namespace::new(levels, separators).ok().map(Entry::Namespace)
        }
        ListKind::Tables | ListKind::Views => {
            let ident: Ident = serde_json::from_str(raw.get()).ok()?;
            let ns = Namespace::new(ident.namespace, separators).ok()?;
            TableIdent::new(ns, ident.name).ok().map(Entry::Object)
        }
        ListKind::Functions => {
            let mut levels: Vec<String> = serde_json::from_str(raw.get()).ok()?;
            let name = levels.pop()?;
            let ns = Namespace::new(levels, separators).ok()?;
            TableIdent::new(ns, name).ok().map(Entry::Object)
        }
    }
}

/// Reads an upstream list response of `kind` and keeps the entries `keep` accepts. An entry
/// whose name icegate could not authorize (wrong shape, a level with `.`) is hidden.
pub fn filter(
    kind: ListKind,
    bytes: &[u8],
    separators: &[String],
    mut keep: impl FnMut(&Entry) -> bool,
) -> Result<ListPage, ListError> {
    json::check_strict(bytes).map_err(|e| ListError::Invalid(e.to_string()))?;
    let mut envelope: BTreeMap<String, Box<RawValue>> =
        serde_json::from_slice(bytes).map_err(|e| ListError::Invalid(e.to_string()))?;
    let list = envelope.remove(kind.key()).ok_or(ListError::MissingList(kind.key()))?;
    let entries: Vec<Box<RawValue>> =
        serde_json::from_str(list.get()).map_err(|_| ListError::MissingList(kind.key()))?;
    let next_page_token = match envelope.remove(TOKEN_KEY) {
        None => None,
        Some(raw) => serde_json::from_str::<Option<String>>(raw.get())
            .map_err(|_| ListError::Invalid(format!("`{TOKEN_KEY}` is not a string")))?,
    };
    let mut kept = Vec::with_capacity(entries.len());
    let mut hidden = 0;
    for raw in entries {
        match entry(kind, &raw, separators) {
            Some(e) if keep(&e) => kept.push(raw),
            _ => hidden += 1,
        }
    }
    Ok(ListPage { kept, next_page_token, others: envelope, hidden })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(page: &ListPage) -> Vec<String> {
        page.visible().map(|r| r.get().to_owned()).collect()
    }

    #[test]
    fn tables_are_filtered_and_copied_byte_for_byte() {
        let body = br#"{"identifiers":[{"namespace":["s"],"name":"a"}, { "namespace" : ["s"], "name" : "\u0062" },{"namespace":["s"],"name":"c"}],"next-page-token":"n1","extra":{"k":1}}"#;
        let page = filter(ListKind::Tables, body, &[], |e| !matches!(e, Entry::Object(i) if i.name == "c")).unwrap();
        assert_eq!(
            names(&page),
            vec![r#"{"namespace":["s"],"name":"a"}"#, r#"{ "namespace" : ["s"], "name" : "\u0062" }"#]
        );
        assert_eq!(page.hidden(), 1);
        assert_eq!(page.next_page_token(), Some("n1"));
        let out: serde_json::Value = serde_json::from_slice(&page.render(ListKind::Tables, Some("wrapped"))).unwrap();
        assert_eq!(out["next-page-token"], "wrapped");
        assert_eq!(out["extra"]["k"], 1);
        assert_eq!(out["identifiers"].as_array().unwrap().len(), 2);
        let out: serde_json::Value = serde_json::from_slice(&page.render(ListKind::Tables, None)).unwrap();
        assert!(out.get("next-page-token").is_none());
    }

    #[test]
    fn namespaces_and_functions_have_their_own_shapes() {
        let page =
            filter(ListKind::Namespaces, br#"{"namespaces":[["a"],["a","b"],[],["x.y"]]}"#, &[], |_| true).unwrap();
        assert_eq!(names(&page), vec![r#"["a"]"#, r#"["a","b"]"#]);
        assert_eq!(page.hidden(), 2, "an empty namespace and a level with `.` are hidden");
        let mut seen = Vec::new();
        let page =
            filter(ListKind::Functions, br#"{"identifiers":[["s","f1"],["s","x","f2"],["lonely"]]}"#, &[], |e| {
                seen.push(e.clone());
                true
            })
            .unwrap();
        assert_eq!(page.visible().count(), 2);
        assert_eq!(
            seen[1],
            Entry::Object(
                TableIdent::new(Namespace::new(vec!["s".into(), "x".into()], &[]).unwrap(), "f2".into()).unwrap()
            )
        );
    }

    #[test]
    fn unreadable_responses_are_errors() {
        assert!(filter(ListKind::Tables, b"{\"identifiers\": [", &[], |_| true).is_err());
        assert_eq!(filter(ListKind::Tables, b"{}", &[], |_| true).unwrap_err(), ListError::MissingList("identifiers"));
        assert!(filter(ListKind::Tables, br#"{"identifiers":{}}"#, &[], |_| true).is_err());
        assert!(filter(ListKind::Tables, br#"{"identifiers":[],"identifiers":[]}"#, &[], |_| true).is_err());
        assert!(filter(ListKind::Tables, br#"{"identifiers":[],"next-page-token":5}"#, &[], |_| true).is_err());
        let page = filter(ListKind::Tables, br#"{"identifiers":[],"next-page-token":null}"#, &[], |_| true).unwrap();
        assert_eq!(page.next_page_token(), None);
    }

    #[test]
    fn malformed_entries_are_hidden_without_asking() {
        let mut asked = 0;
        let page = filter(
            ListKind::Tables,
            br#"{"identifiers":[{"name":"a"},{"namespace":["s"],"name":5},"x",{"namespace":["s"],"name":".."}]}"#,
            &[],
            |_| {
                asked += 1;
                true
            },
        )
        .unwrap();
        assert_eq!((asked, page.hidden()), (0, 4));
    }
}
