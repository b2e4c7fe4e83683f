//! Ambiguous HTTP/1 framing, seen in the bytes a connection sends: a request head with both
//! `Content-Length` and `Transfer-Encoding` (RFC 9112 §6.1) is refused with 400 and its
//! connection closed (docs/design.md §7). hyper reads such a request by its `Transfer-Encoding` alone
//! and drops `Content-Length` before icegate sees the headers, so the pair can only be seen
//! here, in the bytes as they arrive.
//!
//! [`FramingIo`] wraps a connection's (decrypted) stream and looks at the start of every line:
//! a head line `content-length:` and a `transfer-encoding:` before the blank line that ends the
//! head mark the connection. Body lines are looked at too, which is safe: Iceberg REST bodies
//! are JSON, where no line can start with a header name and a colon, so a mark is never made
//! by a body; and marking too much only refuses a connection that carried such bytes. HTTP/2
//! (its preface) is not scanned: its framing is binary and has no such pair.

use crate::serve::pipeline::identity::Ambiguity;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const CONTENT_LENGTH: &[u8] = b"content-length:";
const TRANSFER_ENCODING: &[u8] = b"transfer-encoding:";
/// The longest line start compared.
const KEPT: usize = TRANSFER_ENCODING.len();
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

/// The line scanner of one connection; it survives reads that split a line.
#[derive(Debug)]
struct Scanner {
    /// The current line's first bytes, lower-cased.
    start: [u8; KEPT],
    len: usize,
    content_length: bool,
    transfer_encoding: bool,
    /// Bytes seen so far, up to the length of the HTTP/2 preface.
    first: Vec<u8>,
    http2: bool,
}

impl Scanner {
    fn new() -> Self {
        Self {
            start: [0; KEPT],
            len: 0,
            content_length: false,
            transfer_encoding: false,
            first: Vec::with_capacity(H2_PREFACE.len()),
            http2: false,
        }
    }

    /// Scans `bytes`; true when a head had both framing headers.
    fn scan(&mut self, bytes: &[u8]) -> bool {
        if self.first.len() < H2_PREFACE.len() {
            let take = (H2_PREFACE.len() - self.first.len()).min(bytes.len());
            self.first.extend_from_slice(bytes.get(..take).unwrap_or_default());
            self.http2 = self.first.len() == H2_PREFACE.len() && self.first == H2_PREFACE;
        }
        if self.http2 {
            return false;
        }
        let mut ambiguous = false;
        let mut rest = bytes;
        loop {
            let (line, ended) = match memchr::memchr(b'\n', rest) {
                Some(at) => (rest.get(..at).unwrap_or_default(), true),
                None => (rest, false),
            };
            self.keep(line);
            if !ended {
                return ambiguous;
            }
            ambiguous |= self.end_line();
            rest = rest.get(line.len() + 1..).unwrap_or_default();
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(KEPT.saturating_sub(self.len)) {
            if let Some(slot) = self.start.get_mut(self.len) {
                *slot = b.to_ascii_lowercase();
                self.len += 1;
            }
        }
    }

    fn end_line(&mut self) -> bool {
        let line = self.start.get(..self.len).unwrap_or_default();
        if line.is_empty() || line == b"\r" {
            // the blank line ends a head
            self.content_length = false;
            self.transfer_encoding = false;
        } else if line.starts_with(CONTENT_LENGTH) {
            self.content_length = true;
        } else if line.starts_with(TRANSFER_ENCODING) {
            self.transfer_encoding = true;
        }
        self.len = 0;
        self.content_length && self.transfer_encoding
    }
}

/// A connection's stream, scanned as it is read.
#[derive(Debug)]
pub struct FramingIo<T> {
    inner: T,
    scanner: Scanner,
    ambiguity: Arc<Ambiguity>,
}

impl<T> FramingIo<T> {
    pub fn new(inner: T, ambiguity: Arc<Ambiguity>) -> Self {
        Self { inner, scanner: Scanner::new(), ambiguity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FramingIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            if this.scanner.scan(buf.filled().get(before..).unwrap_or_default()) {
                this.ambiguity.mark();
            }
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for FramingIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ambiguous(parts: &[&str]) -> bool {
        let mut s = Scanner::new();
        parts.iter().fold(false, |seen, p| s.scan(p.as_bytes()) | seen)
    }

    #[test]
    fn both_framing_headers_in_one_head_are_seen_in_any_order_case_and_split() {
        let cl_te = "POST / HTTP/1.1\r\nhost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(ambiguous(&[cl_te]));
        assert!(ambiguous(&["POST / HTTP/1.1\r\nTRANSFER-ENCODING: chunked\r\ncontent-length: 4\r\n\r\n"]));
        // split anywhere, even inside a header name
        for at in 1..cl_te.len() {
            let (a, b) = cl_te.split_at(at);
            assert!(ambiguous(&[a, b]), "split at {at}");
        }
        // a later head of a pipelined connection
        assert!(ambiguous(&[
            "GET / HTTP/1.1\r\nhost: x\r\n\r\n",
            "POST / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n"
        ]));
    }

    #[test]
    fn one_framing_header_per_head_is_not_ambiguous() {
        assert!(!ambiguous(&[
            "POST / HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        ]));
        // a header that merely contains the name
        assert!(!ambiguous(&["POST / HTTP/1.1\r\nx-content-length: 2\r\ntransfer-encoding: chunked\r\n\r\n"]));
        // JSON bodies cannot start a line with a header name and a colon
        assert!(!ambiguous(&["POST / HTTP/1.1\r\ncontent-length: 40\r\n\r\n{\r\n\"transfer-encoding:\": 1\r\n}"]));
    }

    #[test]
    fn http2_connections_are_not_scanned() {
        assert!(!ambiguous(&["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\ncontent-length: 1\r\ntransfer-encoding: x\r\n"]));
        assert!(!ambiguous(&["PRI * HT", "TP/2.0\r\n\r\ncontent-length: 1\r\ntransfer-encoding: x\r\n"]));
    }
}
