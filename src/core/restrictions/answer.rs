//! A trusted reader's loadTable-like answer with its `read-restrictions` member written in
//! (docs/design.md §8). Only an answer that carries restrictions comes here: it is scanned
//! once more with the envelope scan, only the current schema is parsed out of `metadata`,
//! and every other member passes byte for byte. Answers without restrictions never reach this
//! module, so their cost is unchanged.

use super::apply::Applied;
use super::schema::{ResolveError, Schema};
use super::wire::read_restrictions;
use crate::core::credentials::envelope::{Envelope, EnvelopeError};
use thiserror::Error;

const MEMBER: &str = "read-restrictions";

/// Why restrictions could not be written into an answer: the request fails closed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum InjectError {
    #[error("{0}")]
    Envelope(#[from] EnvelopeError),
    #[error("upstream answer carries no table `metadata`")]
    NoMetadata,
    /// The policy names something the table does not have (the policy's mistake).
    #[error("{0}")]
    Resolve(#[from] ResolveError),
}

/// `body` with `read-restrictions` set to the restrictions `applied`, combined with the
/// upstream's own; members keep their order, the new member goes last.
pub fn inject(body: &[u8], applied: &Applied) -> Result<Vec<u8>, InjectError> {
    let envelope = Envelope::scan(body)?;
    if envelope.member("metadata").is_none() {
        return Err(InjectError::NoMetadata);
    }
    let raw = |m: Option<&crate::core::credentials::envelope::Member<'_>>| m.and_then(|m| body.get(m.value.clone()));
    let schema = Schema::read(
        raw(envelope.metadata_member("current-schema-id")),
        raw(envelope.metadata_member("schemas")),
        raw(envelope.metadata_member("schema")),
    )?;
    let upstream = match raw(envelope.member(MEMBER)) {
        None => None,
        Some(bytes) => Some(
            serde_json::from_slice::<serde_json::Value>(bytes)
                .map_err(|_| ResolveError::Upstream("not JSON".to_owned()))?,
        ),
    };
    let value = read_restrictions(applied, &schema, upstream.as_ref())?;
    let rendered = serde_json::to_vec(&value).map_err(|_| ResolveError::Upstream("not writable".to_owned()))?;
    let mut out = Vec::with_capacity(body.len() + rendered.len() + MEMBER.len() + 8);
    out.push(b'{');
    for m in envelope.members.iter().filter(|m| m.key != MEMBER) {
        out.extend_from_slice(body.get(m.span.clone()).ok_or(EnvelopeError::Malformed(m.span.start))?);
        out.push(b',');
    }
    out.extend_from_slice(b"\"read-restrictions\":");
    out.extend_from_slice(&rendered);
    out.push(b'}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::restrictions::action::{Action, ColumnPath};
    use serde_json::{Value, json};

    fn applied() -> Applied {
        Applied {
            table: "prod.s.t".into(),
            entries: Vec::new(),
            trusted: true,
            row_filter: None,
            columns: vec![(ColumnPath::parse("email").unwrap(), Action::MaskAlphanum)],
        }
    }

    fn answer(extra: &str) -> String {
        format!(
            r#"{{"metadata-location":"s3://b/t/m.json","metadata":{{"format-version":2,"current-schema-id":1,
            "schemas":[{{"schema-id":0,"type":"struct","fields":[{{"id":1,"name":"email","required":false,"type":"string"}}]}},
            {{"schema-id":1,"type":"struct","fields":[{{"id":4,"name":"mail","required":false,"type":"string"}},
            {{"id":1,"name":"email","required":false,"type":"string"}}]}}]}},"config":{{"k":"v"}}{extra}}}"#
        )
    }

    #[test]
    fn the_member_is_added_and_everything_else_passes_as_it_came() {
        let body = answer("");
        let out = inject(body.as_bytes(), &applied()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let metadata_at = body.find("\"metadata\":").unwrap();
        let metadata_end = body.find(",\"config\"").unwrap();
        assert!(text.contains(&body[metadata_at..metadata_end]), "metadata passes byte for byte");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["read-restrictions"],
            json!({"required-column-projections": [{"field-id": 1, "action": "mask-alphanum"}]})
        );
        assert_eq!(v["config"], json!({"k": "v"}));
    }

    #[test]
    fn an_upstream_member_is_replaced_by_the_merge() {
        let body =
            answer(r#","read-restrictions":{"required-column-projections":[{"field-id":4,"action":"show-last-4"}]}"#);
        let out = inject(body.as_bytes(), &applied()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("read-restrictions").count(), 1);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["read-restrictions"]["required-column-projections"],
            json!([{"field-id": 4, "action": "show-last-4"}, {"field-id": 1, "action": "mask-alphanum"}])
        );
    }

    #[test]
    fn an_answer_without_metadata_or_schema_fails_closed() {
        assert_eq!(inject(br#"{"config":{}}"#, &applied()), Err(InjectError::NoMetadata));
        assert_eq!(
            inject(br#"{"metadata":{"current-schema-id":3,"schemas":[]}}"#, &applied()),
            Err(InjectError::Resolve(ResolveError::NoSchema))
        );
    }
}
