//! A credential-bearing response, read once and written back as slices of the upstream's
//! bytes around the rewritten parts: the `metadata` (megabytes, for a big table) is never
//! parsed into a tree nor copied, and the parts icegate rewrites are read in place.

use super::clean::{RemoteSigningConfig, Rules, StorageCredential, table_locations};
use super::config_map::ConfigMap;
use super::envelope::{self, Envelope, EnvelopeError, Member, Prefix};
use super::storage::TableStorage;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::VecDeque;

/// The parts of one response icegate may change, borrowed from the upstream's answer.
#[derive(Debug)]
pub struct Parsed<'a> {
    body: &'a Bytes,
    /// The top-level members; the metadata's are read once, in `read`, and not kept.
    members: Vec<Member<'a>>,
    config: Option<ConfigMap<'a>>,
    storage: Option<Vec<StorageCredential<'a>>>,
    /// The top-level `remote-signing-config` (Iceberg 1.11+).
    remote_signing: Option<RemoteSigningConfig>,
    /// The table's locations, when the response carries its `metadata`.
    pub locations: Option<Vec<String>>,
}

impl<'a> Parsed<'a> {
    pub fn read(body: &'a Bytes) -> Result<Self, EnvelopeError> {
        Self::read_resuming(body, None, 0).map(|(parsed, _)| parsed)
    }

    /// [`Parsed::read`] resuming from what reading an earlier answer of the same table learned
    /// ([`Prefix`]); returns beside it what this reading learned, when it scanned a `metadata`
    /// of at most `keep_up_to` bytes anew.
    pub fn read_resuming(
        body: &'a Bytes,
        earlier: Option<&'a Prefix>,
        keep_up_to: usize,
    ) -> Result<(Self, Option<Prefix>), EnvelopeError> {
        let envelope = Envelope::scan_resuming(body, earlier)?;
        // A list or map the upstream sends as `null` is read as absent (older Lakekeeper).
        let config: Option<ConfigMap<'a>> = envelope
            .member("config")
            .map(|m| envelope::parse::<Option<_>>(body, m, "a map of strings"))
            .transpose()?
            .flatten();
        let storage: Option<Vec<StorageCredential<'a>>> = envelope
            .member("storage-credentials")
            .map(|m| envelope::parse::<Option<_>>(body, m, "a list of storage credentials"))
            .transpose()?
            .flatten();
        let remote_signing: Option<RemoteSigningConfig> = envelope
            .member("remote-signing-config")
            .map(|m| envelope::parse::<Option<_>>(body, m, "a remote signing configuration"))
            .transpose()?
            .flatten();
        // A resumed answer's metadata is byte for byte the earlier one's: so are its locations.
        let known = earlier.filter(|_| envelope.resumed).and_then(Prefix::locations);
        let locations = match (envelope.member("metadata"), known) {
            (None, _) => None,
            (Some(_), Some(known)) => Some(known.to_vec()),
            (Some(_), None) => {
                let location: Option<String> = envelope
                    .metadata_member("location")
                    .map(|m| envelope::parse(body, m, "a string"))
                    .transpose()?
                    .flatten();
                let properties: Option<Map<String, Value>> = envelope
                    .metadata_member("properties")
                    .map(|m| envelope::parse::<Option<_>>(body, m, "a map of strings"))
                    .transpose()?
                    .flatten();
                Some(table_locations(location, properties.as_ref()))
            }
        };
        // Kept only once everything read from the prefix has been read without error.
        let learned = match (envelope.resumed, &locations) {
            (true, _) => None,
            (false, Some(locations)) => envelope.prefix(body, keep_up_to).map(|p| p.with_locations(locations.clone())),
            (false, None) => envelope.prefix(body, keep_up_to),
        };
        let members = envelope.members;
        Ok((Self { body, members, config, storage, remote_signing, locations }, learned))
    }

    /// The table's storage, when the response carries its `metadata`.
    pub fn storage(&self) -> Option<TableStorage> {
        self.locations.clone().map(|locations| TableStorage::new(locations, self.config.as_ref()))
    }

    /// Whether the upstream vended anything: a `storage-credentials` entry, or a `config` key
    /// that removal would take away.
    pub fn vends(&self, rules: &Rules<'_>) -> bool {
        let stripped = Rules { action: super::Action::Strip, minted: None, ..*rules };
        let entries = self.storage.as_ref().is_some_and(|s| !s.is_empty());
        let keys = self.config.as_ref().is_some_and(|c| c.keys().any(|k| k != "token" && !stripped.allowed(k)));
        entries || keys
    }

    /// The rewritten body. A member icegate adds (minted credentials where the upstream sent
    /// none) goes last.
    pub fn render(self, rules: &Rules<'_>, locations: &[String]) -> Result<Chunks, EnvelopeError> {
        let mut out = Chunks::for_about(self.body.len());
        out.push(Bytes::from_static(b"{"));
        let mut config = self.config;
        let mut storage = self.storage;
        let mut remote_signing = self.remote_signing;
        let is_table = has(&self.members, "metadata");
        let mut first = true;
        let mut member = |out: &mut Chunks, bytes: Bytes| {
            if !std::mem::take(&mut first) {
                out.push(Bytes::from_static(b","));
            }
            out.push(bytes);
        };
        for m in &self.members {
            match m.key.as_ref() {
                "config" => member(&mut out, rendered("config", &rules_config(rules, config.take()))?),
                "storage-credentials" => {
                    let entries = rules.storage_credentials(storage.take().unwrap_or_default(), locations);
                    member(&mut out, rendered("storage-credentials", &entries)?);
                }
                "remote-signing-config" => match remote_signing.take() {
                    Some(mut signing) => {
                        rules.remote_signing_config(&mut signing);
                        member(&mut out, rendered("remote-signing-config", &signing)?);
                    }
                    None => member(&mut out, self.body.slice(m.span.clone())),
                },
                _ => member(&mut out, self.body.slice(m.span.clone())),
            }
        }
        // a table answer without `config` gets one when icegate adds credentials or its signer
        let adds = rules.minted.is_some() || rules.action == super::Action::Sign;
        if adds && is_table && !has(&self.members, "config") {
            member(&mut out, rendered("config", &rules_config(rules, None))?);
        }
        if rules.minted.is_some() && !has(&self.members, "storage-credentials") {
            member(&mut out, rendered("storage-credentials", &rules.storage_credentials(Vec::new(), locations))?);
        }
        out.push(Bytes::from_static(b"}"));
        out.finish();
        Ok(out)
    }
}

fn has(members: &[Member<'_>], key: &str) -> bool {
    members.iter().any(|m| m.key == key)
}

fn rules_config<'a>(rules: &Rules<'_>, config: Option<ConfigMap<'a>>) -> ConfigMap<'a> {
    let mut config = config.unwrap_or_default();
    rules.config(&mut config);
    config
}

fn rendered(key: &str, value: &impl serde::Serialize) -> Result<Bytes, EnvelopeError> {
    let mut bytes = serde_json::to_vec(key).unwrap_or_default();
    bytes.push(b':');
    serde_json::to_writer(&mut bytes, value)
        .map_err(|_| EnvelopeError::Member { key: key.to_owned(), expected: "JSON icegate can write" })?;
    Ok(Bytes::from(bytes))
}

/// Pieces smaller than this are copied together rather than sent as slices of their own:
/// hyper writes at most 16 queued buffers per `writev`, and a response of many one-byte
/// separators would cost a second system call (and a second TCP segment) per response.
const COALESCE_BELOW: usize = 4096;

/// A whole body up to this size is copied into one buffer. hyper writes out its queue as soon
/// as it holds more than the server's buffer limit (`limits.max_header_bytes`, 16 KiB by
/// default), so a 20 KB table of three parts went out in two `writev`s (strace); copying 20 KB
/// costs about a microsecond, a system call and a TCP segment more.
const ONE_BUFFER_UP_TO: usize = 32 * 1024;

/// A body made of chunks, most of them slices of the upstream's buffer.
#[derive(Debug, Default)]
pub struct Chunks {
    parts: VecDeque<Bytes>,
    /// Small pieces not yet in `parts`, copied together.
    pending: Vec<u8>,
    len: usize,
    /// Every piece goes into `pending`: a body that will be written as one buffer is gathered
    /// there from the start, not copied together at the end.
    whole: bool,
}

/// Room for what a rewrite adds to an answer (a signer's keys, minted credentials) beyond the
/// upstream's size, so that gathering a small answer does not grow its buffer.
const ADDED_ROOM: usize = 2048;

impl Chunks {
    /// A body about as long as `upstream`, the answer it is rewritten from.
    fn for_about(upstream: usize) -> Self {
        if upstream > ONE_BUFFER_UP_TO {
            return Self::default();
        }
        Self { pending: Vec::with_capacity(upstream + ADDED_ROOM), whole: true, ..Self::default() }
    }

    fn push(&mut self, bytes: Bytes) {
        self.len += bytes.len();
        if self.whole || bytes.len() < COALESCE_BELOW {
            self.pending.extend_from_slice(&bytes);
            return;
        }
        self.flush_pending();
        self.parts.push_back(bytes);
    }

    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            self.parts.push_back(Bytes::from(std::mem::take(&mut self.pending)));
        }
    }

    /// Ends the body: what is pending becomes its last part, and a small body one buffer.
    fn finish(&mut self) {
        let buffers = self.parts.len() + usize::from(!self.pending.is_empty());
        if buffers > 1 && self.len <= ONE_BUFFER_UP_TO {
            let mut whole = Vec::with_capacity(self.len);
            for part in self.parts.drain(..) {
                whole.extend_from_slice(&part);
            }
            whole.append(&mut self.pending);
            self.parts.push_back(Bytes::from(whole));
        }
        self.flush_pending();
    }

    /// The next buffer of the body, in order.
    pub fn pop_front(&mut self) -> Option<Bytes> {
        let next = self.parts.pop_front();
        if let Some(b) = &next {
            self.len -= b.len();
        }
        next
    }

    /// How many buffers the body is written as.
    pub fn part_count(&self) -> usize {
        self.parts.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole body in one buffer (tests and benchmarks).
    pub fn concat(&self) -> Vec<u8> {
        self.parts.iter().flat_map(|b| b.iter().copied()).collect()
    }
}

#[cfg(test)]
mod tests;
