//! The values of a policy file with the line each was on (docs/design.md §3), read alike on the
//! YAML path (through the YAML parser's spans) and on the JSON fast path (`super::json`, where a
//! string's line is found from where serde_json hands it over borrowed from the text).

use super::model::{self, Condition, ObjectType};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::fmt;

/// A string and the line it was on. Read through the parser's `Spanned` and narrowed at once:
/// a `Spanned` holds two full locations, several times the string it wraps, and a large
/// policy has a million of them. On the JSON path (`super::json`) the line comes from where
/// the string lies in the text instead.
#[derive(Clone, Debug)]
pub struct Text {
    pub value: String,
    line: u32,
}

impl Text {
    pub(super) fn new(value: String, line: u32) -> Self {
        Self { value, line }
    }

    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if active() {
            return deserializer.deserialize_str(TextVisitor);
        }
        let s = Spanned::<String>::deserialize(deserializer)?;
        Ok(Self { line: narrow(s.referenced.line()), value: s.value })
    }
}

/// A keyword of the policy (an object type, a privilege, a condition), read into what it names
/// as it is parsed: a large policy has millions of them, and a string each was most of the
/// parsed form's allocations. The text is kept only when it names nothing, for the error.
#[derive(Clone, Debug)]
pub struct Word<T> {
    pub value: Result<T, Box<str>>,
    line: u32,
}

/// What a [`Word`] can name.
pub trait Keyword: Sized {
    fn parse(text: &str) -> Option<Self>;
}

impl<T: Keyword> Word<T> {
    pub(super) fn read(text: &str, line: u32) -> Self {
        Self { value: T::parse(text).ok_or_else(|| text.into()), line }
    }

    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de, T: Keyword> Deserialize<'de> for Word<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if active() {
            return deserializer.deserialize_str(WordVisitor(std::marker::PhantomData));
        }
        let s = Spanned::<String>::deserialize(deserializer)?;
        Ok(Self::read(&s.value, narrow(s.referenced.line())))
    }
}

macro_rules! keyword {
    ($($ty:ty),+) => {$(
        impl Keyword for $ty {
            fn parse(text: &str) -> Option<Self> {
                <$ty>::parse(text)
            }
        }
    )+};
}

keyword!(ObjectType, model::Privilege, Condition);

/// A value other than a string (a number, a boolean), and the line it was on.
#[derive(Clone, Debug)]
pub struct Located<T> {
    pub value: T,
    line: u32,
}

impl<T> Located<T> {
    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if active() {
            let (value, line) = located(deserializer)?;
            return Ok(Self { value, line });
        }
        let s = Spanned::<T>::deserialize(deserializer)?;
        Ok(Self { line: narrow(s.referenced.line()), value: s.value })
    }
}

/// A value the model accepts and ignores (Gravitino's role `properties` and `audit`).
#[derive(Clone, Copy, Debug)]
pub struct Ignored;

impl<'de> Deserialize<'de> for Ignored {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if active() {
            return deserializer.deserialize_any(UniqueKeys);
        }
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Self)
    }
}

fn narrow(line: u64) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// Where the file being parsed lies in memory and where its lines start: a string that
/// serde_json hands over borrowed points into the text, so its offset gives its line.
struct Lines {
    base: usize,
    len: usize,
    /// Offsets of the text's newlines.
    newlines: Vec<usize>,
    /// Newlines before the last string found; serde_json reads forward, so the next string's
    /// line is found by stepping on from here (all steps together cross the text once).
    passed: usize,
}

impl Lines {
    fn line_of(&mut self, addr: usize) -> Option<u32> {
        let offset = addr.checked_sub(self.base).filter(|o| *o < self.len)?;
        if self.newlines.get(self.passed.wrapping_sub(1)).is_some_and(|n| *n >= offset) {
            self.passed = self.newlines.partition_point(|n| *n < offset);
        }
        // Usually the same line as the last string, or the next one.
        while self.newlines.get(self.passed).is_some_and(|n| *n < offset) {
            self.passed += 1;
        }
        u32::try_from(self.passed + 1).ok()
    }
}

thread_local! {
    /// The file being parsed on this thread's JSON path; `None` elsewhere (the YAML path).
    static PARSING: RefCell<Option<Lines>> = const { RefCell::new(None) };
}

/// Whether this thread is on the JSON path, which [`Text`] reads differently.
pub(super) fn active() -> bool {
    PARSING.with(|p| p.borrow().is_some())
}

/// Runs `parse` on the JSON path over `text`: the strings serde_json hands over borrowed from
/// `text` get their lines from where they lie in it.
pub(super) fn reading_json<T>(text: &str, parse: impl FnOnce() -> T) -> T {
    let newlines = text.bytes().enumerate().filter_map(|(i, b)| (b == b'\n').then_some(i)).collect();
    let lines = Lines { base: text.as_ptr().addr(), len: text.len(), newlines, passed: 0 };
    PARSING.with(|p| p.replace(Some(lines)));
    // Reset even if parsing unwinds, so that a later YAML parse on this thread is not misread.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            PARSING.with(|p| p.replace(None));
        }
    }
    let _reset = Reset;
    parse()
}

/// Reads a value other than a string on the JSON path, and its line: serde_json hands the
/// value's text over borrowed, and it is then read on its own.
fn located<'de, D, T>(deserializer: D) -> Result<(T, u32), D::Error>
where
    D: de::Deserializer<'de>,
    T: de::Deserialize<'de>,
{
    let raw = <&'de serde_json::value::RawValue>::deserialize(deserializer)?;
    let line = line_of::<D::Error>(raw.get())?;
    let value = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
    Ok((value, line))
}

/// The line of a string borrowed from the text being parsed.
fn line_of<E: de::Error>(within: &str) -> Result<u32, E> {
    let line = PARSING.with(|p| p.borrow_mut().as_mut().and_then(|l| l.line_of(within.as_ptr().addr())));
    line.ok_or_else(|| E::custom("value outside the text"))
}

/// Reads a value the model ignores on the JSON path, refusing a key repeated in any of its
/// mappings as the YAML parser does.
struct UniqueKeys;

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Ignored;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Ignored, A::Error> {
        while seq.next_element::<Ignored>()?.is_some() {}
        Ok(Ignored)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Ignored, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value::<Ignored>()?;
        }
        Ok(Ignored)
    }
}

/// Reads a [`Text`] on the JSON path: only a string borrowed from the text, whose offset
/// gives its line.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string without escapes")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text, E> {
        Ok(Text::new(v.to_owned(), line_of(v)?))
    }
}

/// Reads a [`Word`] on the JSON path, without copying the keyword's text.
struct WordVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Keyword> Visitor<'de> for WordVisitor<T> {
    type Value = Word<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string without escapes")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Word<T>, E> {
        Ok(Word::read(v, line_of(v)?))
    }
}
