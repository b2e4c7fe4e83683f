//! Idle connections: a connection that sends nothing is closed, whether it never sent its first
//! byte (the auto-detecting HTTP/1–HTTP/2 listener waits for it with no timeout of its own) or
//! sits idle between requests. Holding a connection slot costs nothing to a client, so without
//! this a flood of silent connections would take every slot (`limits.max_connections`) for good.
//!
//! [`IdleIo`] wraps the accepted stream: bytes read or written, or a request of the connection in
//! flight ([`Activity::begin`]; slow upstreams have their own timeouts), keep it open. The first
//! request must start within `limits.header_read_timeout_ms`, later ones within
//! `limits.idle_timeout_ms`. The hot path only sets a flag: the timer is re-armed when it fires,
//! so a connection is closed between one and two allowances after it went quiet.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The requests in flight on one connection.
#[derive(Debug)]
pub struct Activity {
    active: AtomicUsize,
    served: AtomicBool,
    first: Duration,
    idle: Duration,
}

impl Activity {
    pub fn new(first: Duration, idle: Duration) -> Arc<Self> {
        Arc::new(Self { active: AtomicUsize::new(0), served: AtomicBool::new(false), first, idle })
    }

    /// A request starts; the connection is busy until the returned guard is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.served.store(true, Ordering::Relaxed);
        self.active.fetch_add(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    fn busy(&self) -> bool {
        self.active.load(Ordering::Relaxed) > 0
    }

    fn allowance(&self) -> Duration {
        if self.served.load(Ordering::Relaxed) { self.idle } else { self.first }
    }
}

/// A request in flight; dropping it ends it.
#[derive(Debug)]
pub struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A stream that fails its reads once it has been idle too long.
#[derive(Debug)]
pub struct IdleIo<T> {
    inner: T,
    activity: Arc<Activity>,
    deadline: Pin<Box<Sleep>>,
    /// Bytes moved since the deadline was last armed.
    moved: bool,
}

impl<T> IdleIo<T> {
    pub fn new(inner: T, activity: Arc<Activity>) -> Self {
        let deadline = Box::pin(tokio::time::sleep(activity.allowance()));
        Self { inner, activity, deadline, moved: false }
    }

    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    fn moved(&mut self) {
        self.moved = true;
    }

    /// Whether the deadline passed with nothing moving and no request in flight; otherwise the
    /// deadline is re-armed (and its waker registered).
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        while self.deadline.as_mut().poll(cx).is_ready() {
            if !self.moved && !self.activity.busy() {
                return true;
            }
            self.moved = false;
            let at = Instant::now() + self.activity.allowance();
            self.deadline.as_mut().reset(at);
        }
        false
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.moved();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending if self.expired(cx) => {
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "connection idle for too long")))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    // Paused time: the runtime's clock moves to the next timer when every task waits, so the
    // allowances are measured exactly, whatever the machine's load.
    #[tokio::test(start_paused = true)]
    async fn a_silent_stream_expires_unless_a_request_is_in_flight() {
        let (mut client, server) = tokio::io::duplex(64);
        let activity = Activity::new(Duration::from_millis(50), Duration::from_millis(200));
        let mut io = IdleIo::new(server, activity.clone());
        let mut buf = [0u8; 8];
        let started = Instant::now();
        assert_eq!(io.read(&mut buf).await.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_millis(50), "the first allowance");
        // busy: the read waits past the deadline for the data
        let mut io = IdleIo::new(io.inner, activity.clone());
        let busy = activity.begin();
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            client.write_all(b"x").await.unwrap();
            client
        });
        assert_eq!(io.read(&mut buf).await.unwrap(), 1);
        drop(busy);
        let _client = writer.await.unwrap();
        // idle after a request: the longer allowance applies
        let started = Instant::now();
        assert_eq!(io.read(&mut buf).await.unwrap_err().kind(), io::ErrorKind::TimedOut);
        // the deadline is checked once per allowance, so a stream goes quiet for one allowance
        // at least and two at most
        let quiet = started.elapsed();
        assert!(quiet >= Duration::from_millis(200) && quiet <= Duration::from_millis(400), "{quiet:?}");
    }
}
