//! HTTP/1 connections served with a cap and timeouts: hyper's HTTP/1
//! connections, as `axum::serve` makes them, with what `axum::serve` leaves
//! out, so slow or idle clients cannot hold a server's file descriptors
//! (issue 25 for the emulator, issue 43 for the reconciler's `/metrics`,
//! which ran out of descriptors under 400 idle connections and then could
//! not open its own files).
//!
//! - At most [`Limits::max_connections`] connections at once. What happens
//!   to the next one is [`Limits::when_full`]: [`WhenFull::Wait`] (the
//!   emulator) stops accepting, and new connections wait in the kernel's
//!   backlog until one closes; [`WhenFull::CloseOldestIdle`] (the
//!   reconciler) accepts it and closes the connection that has waited
//!   longest for a request.
//! - A request's head (request line and headers) must arrive within
//!   [`Limits::header_read_timeout`] of its first byte (for the first
//!   request, of the connection's opening: a client that connects and
//!   sends nothing is closed as soon).
//! - Its body must arrive whole within [`Limits::body_timeout`] of the head
//!   (tower-http's `DeadlineBody`, a total, not a per-read timeout, so a
//!   trickle cannot stretch it); past it the request answers 408.
//! - A connection with no request in flight and nothing arriving is closed
//!   after [`Limits::idle_timeout`] (gracefully: a response being written
//!   is finished first).
//!
//! hyper's own `header_read_timeout` is not used: it also runs while a
//! keep-alive connection waits for its next request, so it would cut every
//! idle connection at the header timeout. The two timers are told apart
//! here by whether bytes of a new request have arrived (`connection.rs`).
//!
//! # Code map
//!
//! HTTP/1 connections served with a cap and timeouts, for the two servers
//! monform runs: the emulator (`Config::connections`, `monform serve`'s
//! flags) and the reconciler's `/metrics`, `/healthz` and `/readyz`
//! (`--listen`). `lib.rs` (`serve`: an axum `Router` on a listener until a
//! shutdown future; `bind`: a listener with a backlog of 1,024, tokio's
//! being 128; the choice of the connection to close), `limits.rs`
//! (`Limits`: the header-read, body and idle timeouts, `max_connections`,
//! `when_full`), `connection.rs` (one connection: hyper's HTTP/1, the
//! watchdog telling a late head from an idle keep-alive, the body's
//! deadline).
//! At the cap, `WhenFull::Wait` (the emulator's) stops accepting, so new
//! connections wait in the kernel's backlog for a slot the timeouts free;
//! `WhenFull::CloseOldestIdle` (the reconciler's: 16 connections, 5 s heads,
//! 10 s idle) accepts and closes at once the connection that has waited
//! longest for a request, never one with a request in flight. A probe sends
//! its request with its connection, so it is served however many idle
//! connections came before it; waiting, it would queue behind all of them
//! (issue 43: 400 idle connections took every descriptor of a reconciler
//! limited to 256, `/healthz` timed out and the loop could not open
//! monform.toml).
//!
//! **Architecture invariant:** no routes and no knowledge of either user;
//! it depends on no monform crate, so the reconciler does not pull in the
//! emulator.

mod connection;
mod limits;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, watch};

use crate::connection::{Activity, connection};
pub use crate::limits::{Limits, WhenFull};

/// Connections the kernel may hold for [`bind`]'s listener before it
/// accepts them (Linux caps it at `net.core.somaxconn`, 4,096 by default).
pub const BACKLOG: u32 = 1024;

/// A listener on `address` with a backlog of [`BACKLOG`] (tokio's
/// `TcpListener::bind` asks for 128, as the standard library does). A
/// connection waiting there costs the process no descriptor; past the
/// backlog the kernel drops it and the client tries again a second later.
/// With [`WhenFull::CloseOldestIdle`], a burst of a few hundred connections
/// arrives faster than they are accepted and closed: with 128 a probe
/// behind them lost a second or more. Call it within a tokio runtime.
pub fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As `TcpListener::bind`: a restarted process can listen again at once.
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(BACKLOG)
}

/// Serves `router` on `listener` until `shutdown` completes, then lets
/// every connection finish what it is doing (idle ones close at once) and
/// returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let open = Arc::new(Open::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection holds a receiver; `closed()` is all of them gone.
    let (alive_tx, alive_rx) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        // Waiting, a slot comes before the connection: at the limit the
        // listener takes nothing from the backlog.
        let reserved = match limits.when_full {
            WhenFull::Wait => tokio::select! {
                permit = slots.clone().acquire_owned() => match permit {
                    Ok(permit) => Some(permit),
                    Err(_) => break,
                },
                () = &mut shutdown => break,
            },
            WhenFull::CloseOldestIdle => None,
        };
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let permit = match reserved {
            Some(permit) => permit,
            None => match make_room(&slots, &open, &mut shutdown).await {
                Some(permit) => permit,
                None => break,
            },
        };
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let registered = open.register(activity.clone(), permit);
        let router = router.clone();
        let stop = stop_rx.clone();
        let alive = alive_rx.clone();
        tokio::spawn(async move {
            connection(stream, remote, router, limits, activity, stop).await;
            drop((registered, alive));
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(alive_rx);
    alive_tx.closed().await;
    Ok(())
}

/// A slot for a connection just accepted: a free one, or the one the
/// oldest idle connection frees when told to close. `None` when the
/// server stops meanwhile.
async fn make_room(
    slots: &Arc<Semaphore>,
    open: &Open,
    shutdown: &mut Pin<&mut impl Future<Output = ()>>,
) -> Option<OwnedSemaphorePermit> {
    match slots.clone().try_acquire_owned() {
        Ok(permit) => return Some(permit),
        Err(TryAcquireError::Closed) => return None,
        Err(TryAcquireError::NoPermits) => {}
    }
    // The chosen one frees its slot as it closes. With none idle (every
    // connection has a request in flight), whichever ends first does.
    if let Some(oldest) = open.oldest_idle() {
        oldest.close.notify_one();
    }
    tokio::select! {
        permit = slots.clone().acquire_owned() => permit.ok(),
        () = shutdown.as_mut() => None,
    }
}

/// The connections open, for [`WhenFull::CloseOldestIdle`] to choose from.
#[derive(Default)]
struct Open {
    next: AtomicU64,
    connections: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Open {
    fn register(self: &Arc<Self>, activity: Arc<Activity>, permit: OwnedSemaphorePermit) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, activity);
        Registered {
            open: self.clone(),
            id,
            _permit: permit,
        }
    }

    /// The connection with no request in flight that has waited longest.
    fn oldest_idle(&self) -> Option<Arc<Activity>> {
        let connections = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        connections
            .values()
            .filter_map(|activity| activity.waiting_since().map(|since| (since, activity)))
            .min_by_key(|(since, _)| *since)
            .map(|(_, activity)| activity.clone())
    }
}

/// A connection's place in [`Open`] and its slot, given up when its task
/// ends: the place first, so that the accepting loop, woken by the slot,
/// cannot choose this connection again to close (it would wait for a
/// slot that never comes, until a timeout freed another).
struct Registered {
    open: Arc<Open>,
    id: u64,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// As `axum::serve`: a connection that failed before it was accepted is
/// skipped; anything else (out of descriptors) is waited out.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset) {
        return;
    }
    tracing::error!(target: "monform::listen", "cannot accept a connection: {error}; waiting 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpStream;
    use tokio::time::Instant;

    use super::*;

    #[test]
    fn the_oldest_idle_is_the_one_waiting_longest_for_a_request_never_one_in_flight() {
        let open = Arc::new(Open::default());
        let (first, second, third) = (
            Arc::new(Activity::new()),
            Arc::new(Activity::new()),
            Arc::new(Activity::new()),
        );
        let slots = Arc::new(Semaphore::new(3));
        let registered = [first.clone(), second.clone(), third.clone()]
            .map(|a| open.register(a, slots.clone().try_acquire_owned().unwrap()));
        let oldest = |open: &Open| open.oldest_idle().map(|a| Arc::as_ptr(&a));
        assert_eq!(oldest(&open), Some(Arc::as_ptr(&first)), "silent since its opening");
        // The first is answered and idle from then: the second has waited longer.
        first.request_started();
        assert_eq!(oldest(&open), Some(Arc::as_ptr(&second)));
        first.request_done(first.now() + 1_000);
        assert_eq!(oldest(&open), Some(Arc::as_ptr(&second)));
        second.request_started();
        third.request_started();
        assert_eq!(oldest(&open), Some(Arc::as_ptr(&first)), "the only one idle");
        first.request_started();
        assert_eq!(oldest(&open), None, "every one has a request in flight");
        drop(registered);
        assert!(open.connections.lock().unwrap().is_empty(), "ended, forgotten");
        assert_eq!(slots.available_permits(), 3, "and their slots free");
    }

    async fn get(address: SocketAddr, path: &str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = TcpStream::connect(address).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    /// Whether the server closed `stream` (end of file or reset).
    async fn closed(stream: &mut TcpStream) -> bool {
        use tokio::io::AsyncReadExt;
        let mut byte = [0u8; 1];
        matches!(
            tokio::time::timeout(Duration::from_millis(500), stream.read(&mut byte)).await,
            Ok(Ok(0) | Err(_))
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn at_the_cap_a_new_request_is_served_at_once_and_the_oldest_idle_connections_closed() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = listener.local_addr().unwrap();
        let router = Router::new().route("/healthz", axum::routing::get(|| async { "ok\n" }));
        let limits = Limits {
            // Long enough that only the cap closes anything here.
            header_read_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4,
            when_full: WhenFull::CloseOldestIdle,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, router, limits, async {
            let _ = stopped.await;
        }));
        let mut idle = Vec::new();
        for _ in 0..400 {
            idle.push(TcpStream::connect(address).await.unwrap());
        }
        let answer = tokio::time::timeout(Duration::from_secs(5), get(address, "/healthz"))
            .await
            .expect("answered while 400 idle connections are open");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("ok\n"), "{answer}");
        // The cap holds: the 397 oldest are closed, the newest three kept
        // (the fourth slot was the request's).
        let (old, new) = idle.split_at_mut(397);
        for (i, stream) in old.iter_mut().enumerate() {
            assert!(closed(stream).await, "idle connection {i} still open");
        }
        for (i, stream) in new.iter_mut().enumerate() {
            assert!(!closed(stream).await, "idle connection {} closed", 397 + i);
        }
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("stops")
            .unwrap()
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiting_at_the_cap_takes_nothing_from_the_backlog() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let router = Router::new().route("/healthz", axum::routing::get(|| async { "ok\n" }));
        let limits = Limits {
            header_read_timeout: Duration::from_millis(600),
            max_connections: 2,
            ..Limits::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, router, limits, async {
            let _ = stopped.await;
        }));
        let mut idle = [
            TcpStream::connect(address).await.unwrap(),
            TcpStream::connect(address).await.unwrap(),
        ];
        let started = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(5), get(address, "/healthz"))
            .await
            .expect("answered once a slot is free");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            started.elapsed() >= Duration::from_millis(400),
            "served before the silent connections' head timeout: {:?}",
            started.elapsed()
        );
        for stream in &mut idle {
            assert!(closed(stream).await, "closed by the head timeout");
        }
        let _ = stop.send(());
        server.await.unwrap().unwrap();
    }
}
