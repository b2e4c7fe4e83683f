//! Where audit lines go, and when: at once, or batched until the runtime's thread goes idle.
//!
//! A `write` per request was the one system call icegate added to every request (strace under
//! the load harness: two `recvfrom`, two `writev` and one `write` per small list, against four
//! for the bare proxy). Batched, the lines of the requests served in one turn of the event loop
//! leave in one `write` just before the thread would sleep, so a line still reaches the file
//! microseconds after its response: what a kill -9 can lose is that turn's lines, where a line
//! written per request loses the requests in flight. Batching is on only once a runtime has
//! promised to flush on park ([`ParkFlush`]); until then (tests, tools) every line is written
//! at once.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Batched lines are written once they reach this size, idle or not.
const MAX_PENDING_BYTES: usize = 64 * 1024;
/// Nor does a line wait longer than this behind a thread that never parks (a busy loop of
/// requests): the next line written after it takes them all out.
const MAX_PENDING_AGE: Duration = Duration::from_millis(20);

/// Where records go.
#[derive(Debug)]
pub enum Sink {
    Stdout,
    File(std::fs::File),
    /// No audit (tests that do not look at it).
    Off,
}

#[derive(Debug, Default)]
struct Pending {
    bytes: Vec<u8>,
    /// When the oldest pending line was added.
    since: Option<Instant>,
}

/// The sink and the lines not yet written to it. The lock is held across the write, so lines
/// reach the sink in the order they were added.
#[derive(Debug)]
pub struct Writer {
    sink: Sink,
    pending: Mutex<Pending>,
    batching: AtomicBool,
}

impl Writer {
    pub fn new(sink: Sink) -> Self {
        Self { sink, pending: Mutex::new(Pending::default()), batching: AtomicBool::new(false) }
    }

    pub fn is_off(&self) -> bool {
        matches!(self.sink, Sink::Off)
    }

    /// Adds one line (ending in `\n`); writes it now unless batching holds it.
    pub fn add(&self, line: &[u8]) {
        self.add_with(|out| out.extend_from_slice(line));
    }

    /// Adds the line `write` appends to the buffer it is given: while batching, the pending
    /// buffer itself, so that a line costs no buffer of its own and no copy.
    pub fn add_with(&self, write: impl FnOnce(&mut Vec<u8>)) {
        let Ok(mut pending) = self.pending.lock() else { return };
        if !self.batching.load(Ordering::Relaxed) {
            let mut line = Vec::new();
            write(&mut line);
            self.write(&line);
            return;
        }
        let now = Instant::now();
        let since = *pending.since.get_or_insert(now);
        write(&mut pending.bytes);
        if pending.bytes.len() >= MAX_PENDING_BYTES || now.duration_since(since) >= MAX_PENDING_AGE {
            self.write_out(&mut pending);
        }
    }

    /// Writes what is pending.
    pub fn flush(&self) {
        if let Ok(mut pending) = self.pending.lock()
            && !pending.bytes.is_empty()
        {
            self.write_out(&mut pending);
        }
    }

    fn write_out(&self, pending: &mut Pending) {
        self.write(&pending.bytes);
        pending.bytes.clear();
        pending.since = None;
        // A burst must not keep its buffer for good.
        if pending.bytes.capacity() > 4 * MAX_PENDING_BYTES {
            pending.bytes.shrink_to(MAX_PENDING_BYTES);
        }
    }

    /// A failed write is logged, never fatal to a request.
    fn write(&self, bytes: &[u8]) {
        let written = match &self.sink {
            Sink::Off => Ok(()),
            Sink::Stdout => std::io::stdout().lock().write_all(bytes),
            Sink::File(file) => (&*file).write_all(bytes),
        };
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot write audit records");
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The runtime's side of batching: built before the runtime (its park hook calls
/// [`ParkFlush::flush`]), attached to the audit writer once that exists.
#[derive(Clone, Debug, Default)]
pub struct ParkFlush(Arc<OnceLock<Arc<Writer>>>);

impl ParkFlush {
    /// Turns batching on for `writer`: from now on its lines wait for [`ParkFlush::flush`].
    pub fn attach(&self, writer: &Arc<Writer>) {
        if self.0.set(writer.clone()).is_ok() {
            writer.batching.store(true, Ordering::Relaxed);
        }
    }

    /// Called by the runtime when a thread is about to sleep.
    pub fn flush(&self) {
        if let Some(writer) = self.0.get() {
            writer.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer to a fresh file of its own (`label` keeps the tests' files apart).
    fn file_writer(label: &str) -> (std::path::PathBuf, Arc<Writer>) {
        let path = std::env::temp_dir().join(format!("icegate-audit-writer-{}-{label}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        (path, Arc::new(Writer::new(Sink::File(file))))
    }

    fn read(path: &std::path::Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn lines_are_written_at_once_until_a_runtime_promises_to_flush() {
        let (path, writer) = file_writer("at-once");
        writer.add(b"one\n");
        assert_eq!(read(&path), "one\n");
        let park = ParkFlush::default();
        park.attach(&writer);
        writer.add(b"two\n");
        writer.add(b"three\n");
        assert_eq!(read(&path), "one\n", "held until the thread parks");
        park.flush();
        assert_eq!(read(&path), "one\ntwo\nthree\n");
        park.flush();
        assert_eq!(read(&path), "one\ntwo\nthree\n", "nothing is written twice");
    }

    #[test]
    fn batched_lines_leave_when_the_batch_is_full_or_old() {
        let (path, writer) = file_writer("full-or-old");
        ParkFlush::default().attach(&writer);
        let line = [b'x'; 1023].iter().copied().chain(*b"\n").collect::<Vec<u8>>();
        for _ in 0..MAX_PENDING_BYTES / line.len() - 1 {
            writer.add(&line);
        }
        assert_eq!(read(&path).len(), 0);
        writer.add(&line);
        assert_eq!(read(&path).len(), MAX_PENDING_BYTES, "a full batch is written without a park");
        writer.add(b"old\n");
        std::thread::sleep(MAX_PENDING_AGE);
        writer.add(b"new\n");
        assert!(read(&path).ends_with("old\nnew\n"), "a line older than the age bound is not held");
    }

    #[test]
    fn pending_lines_are_written_when_the_writer_goes() {
        let (path, writer) = file_writer("drop");
        ParkFlush::default().attach(&writer);
        writer.add(b"last\n");
        drop(writer);
        assert_eq!(read(&path), "last\n");
    }
}
