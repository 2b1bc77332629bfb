//! One connection: hyper's HTTP/1 with a watchdog for the header-read
//! and idle timeouts ([`Activity`]), the body's deadline, and the word to
//! close it at once when the server needs its slot.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tower::ServiceExt;
use tower_http::timeout::DeadlineBody;

use crate::limits::Limits;

/// What a connection's watchdog reads: requests in flight, and since when
/// a head has been arriving or the connection has been idle (ms since
/// `opened`; `NONE` when not); and the server's word to close it.
pub(crate) struct Activity {
    opened: Instant,
    in_flight: AtomicUsize,
    head_since: AtomicU64,
    idle_since: AtomicU64,
    pub(crate) close: Notify,
}

const NONE: u64 = u64::MAX;

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            // The first head is due from the opening.
            head_since: AtomicU64::new(0),
            idle_since: AtomicU64::new(NONE),
            close: Notify::new(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    /// Bytes arrived at `now`: with no request in flight, a head has begun.
    fn received(&self, now: u64) {
        if self.in_flight.load(Ordering::SeqCst) == 0 {
            let _ = self
                .head_since
                .compare_exchange(NONE, now, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    pub(crate) fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.head_since.store(NONE, Ordering::SeqCst);
    }

    pub(crate) fn request_done(&self, now: u64) {
        self.idle_since.store(now, Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Since when the connection has waited for a request (its head
    /// arriving, or idle); `None` with a request in flight.
    pub(crate) fn waiting_since(&self) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let head = self.head_since.load(Ordering::SeqCst);
        let since = if head != NONE {
            head
        } else {
            self.idle_since.load(Ordering::SeqCst)
        };
        (since != NONE).then(|| self.opened + Duration::from_millis(since))
    }

    /// What to do at `now`: keep the connection, or close it.
    fn verdict(&self, now: u64, limits: &Limits) -> Verdict {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return Verdict::Keep;
        }
        let since = |at: &AtomicU64| {
            let at = at.load(Ordering::SeqCst);
            (at != NONE).then(|| Duration::from_millis(now.saturating_sub(at)))
        };
        if let Some(head) = since(&self.head_since) {
            return if head >= limits.header_read_timeout {
                Verdict::SlowHead
            } else {
                Verdict::Keep
            };
        }
        match since(&self.idle_since) {
            Some(idle) if idle >= limits.idle_timeout => Verdict::Idle,
            _ => Verdict::Keep,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Keep,
    SlowHead,
    Idle,
}

/// Counts a request in flight until dropped (the response handed over,
/// or the request abandoned).
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_done(self.0.now());
    }
}

pub(crate) async fn connection(
    stream: TcpStream,
    remote: SocketAddr,
    router: Router,
    limits: Limits,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
) {
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: activity.clone(),
    });
    let requests = activity.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        requests.request_started();
        let in_flight = InFlight(requests.clone());
        let mut request = request.map(|body| axum::body::Body::new(DeadlineBody::new(limits.body_timeout, body)));
        request.extensions_mut().insert(ConnectInfo(remote));
        let router = router.clone();
        async move {
            let response = router.oneshot(request).await;
            drop(in_flight);
            Ok::<_, Infallible>(match response {
                Ok(response) => response,
                Err(never) => match never {},
            })
        }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(None);
    let mut served = pin!(builder.serve_connection(io, service));
    // Often enough that a timeout is kept to within a quarter of it.
    let shortest = limits.header_read_timeout.min(limits.idle_timeout);
    let tick = (shortest / 4).clamp(Duration::from_millis(20), Duration::from_secs(1));
    let mut closing: Option<Instant> = None;
    loop {
        tokio::select! {
            result = served.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(target: "monform::listen", %remote, "connection ended: {error}");
                }
                return;
            }
            // Chosen to make room (`WhenFull::CloseOldestIdle`): idle, so
            // closed at once; a request that began since is answered first.
            () = activity.close.notified() => {
                if activity.in_flight.load(Ordering::SeqCst) == 0 {
                    tracing::debug!(target: "monform::listen", %remote, "closed: the oldest idle connection, to make room for a new one");
                    return;
                }
                if closing.is_none() {
                    served.as_mut().graceful_shutdown();
                    closing = Some(Instant::now());
                }
            }
            // The server stops (the flag only ever turns true).
            _ = stop.changed(), if closing.is_none() => {
                served.as_mut().graceful_shutdown();
                closing = Some(Instant::now());
            }
            () = tokio::time::sleep(tick) => {
                match activity.verdict(activity.now(), &limits) {
                    Verdict::Keep => {}
                    Verdict::SlowHead => {
                        tracing::debug!(target: "monform::listen", %remote, "closed: no complete request head within {:?}", limits.header_read_timeout);
                        return;
                    }
                    Verdict::Idle if closing.is_none() => {
                        served.as_mut().graceful_shutdown();
                        closing = Some(Instant::now());
                    }
                    // A graceful close that does not complete (a response
                    // the client does not read) ends here.
                    Verdict::Idle => {
                        if closing.is_some_and(|at| at.elapsed() >= limits.header_read_timeout) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// The connection's socket, telling its [`Activity`] when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.received(self.activity.now());
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::WhenFull;

    fn activity() -> Activity {
        Activity::new()
    }

    const LIMITS: Limits = Limits {
        header_read_timeout: Duration::from_millis(100),
        body_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_millis(300),
        max_connections: 1,
        when_full: WhenFull::Wait,
    };

    #[test]
    fn a_head_is_due_from_the_opening_then_idle_time_counts_between_requests() {
        let a = activity();
        assert_eq!(a.verdict(99, &LIMITS), Verdict::Keep);
        assert_eq!(
            a.verdict(100, &LIMITS),
            Verdict::SlowHead,
            "nothing sent since the opening"
        );

        let a = activity();
        a.received(10);
        a.request_started();
        assert_eq!(
            a.verdict(5_000, &LIMITS),
            Verdict::Keep,
            "a request in flight is not timed here"
        );
        a.request_done(5_000);
        assert_eq!(
            a.verdict(5_299, &LIMITS),
            Verdict::Keep,
            "idle longer than a head may take"
        );
        assert_eq!(a.verdict(5_300, &LIMITS), Verdict::Idle);
        // The next request's first bytes start the head's clock.
        a.received(5_300);
        a.received(5_350);
        assert_eq!(a.verdict(5_399, &LIMITS), Verdict::Keep);
        assert_eq!(a.verdict(5_400, &LIMITS), Verdict::SlowHead);
        // Bytes of a request in flight (its body) start nothing.
        a.request_started();
        a.received(5_500);
        a.request_done(5_600);
        assert_eq!(a.verdict(5_899, &LIMITS), Verdict::Keep);
        assert_eq!(a.verdict(5_900, &LIMITS), Verdict::Idle);
    }
}
