//! Writes an apply's state changes on a thread of its own, so the executor
//! never waits for a disk or a database: it queues each change and goes on.
//! Group commit: whatever was queued while the previous write ran goes out
//! as the next write (one fsync, one transaction), so a busy apply writes
//! in batches and an idle one at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{Delta, State, StateError, StateWriter};

pub struct Recorder {
    queue: Option<mpsc::Sender<Delta>>,
    thread: Option<JoinHandle<Box<dyn StateWriter>>>,
    /// The first write that failed (until reported); the thread stops at it.
    failed: Arc<Mutex<Option<StateError>>>,
    broken: Arc<AtomicBool>,
}

impl Recorder {
    pub fn start(mut writer: Box<dyn StateWriter>) -> Recorder {
        let (queue, changes) = mpsc::channel::<Delta>();
        let failed = Arc::new(Mutex::new(None));
        let failure = failed.clone();
        let broken = Arc::new(AtomicBool::new(false));
        let breaks = broken.clone();
        let thread = std::thread::Builder::new().name("monform-state".into()).spawn(move || {
            while let Ok(first) = changes.recv() {
                let mut batch = vec![first];
                batch.extend(changes.try_iter());
                if let Err(error) = writer.write(&batch) {
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                    breaks.store(true, Ordering::SeqCst);
                    break;
                }
            }
            writer
        });
        match thread {
            Ok(thread) => Recorder {
                queue: Some(queue),
                thread: Some(thread),
                failed,
                broken,
            },
            Err(error) => {
                let error = StateError::Write {
                    path: "(state writer thread)".into(),
                    source: error,
                };
                Recorder {
                    queue: None,
                    thread: None,
                    failed: Arc::new(Mutex::new(Some(error))),
                    broken: Arc::new(AtomicBool::new(true)),
                }
            }
        }
    }

    /// Queues a change. Fails once a write has failed: the apply stops
    /// rather than go on with changes it cannot record.
    pub fn record(&self, delta: Delta) -> Result<(), StateError> {
        self.check()?;
        match &self.queue {
            Some(queue) if queue.send(delta).is_ok() => Ok(()),
            _ => Err(self.failure()),
        }
    }

    fn check(&self) -> Result<(), StateError> {
        match self.broken.load(Ordering::SeqCst) {
            true => Err(self.failure()),
            false => Ok(()),
        }
    }

    /// The write's error the first time it is asked for, then a reminder.
    fn failure(&self) -> StateError {
        let first = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take();
        first.unwrap_or_else(stopped)
    }

    /// Waits until every queued change is written, then lets the backend
    /// fold them (`StateWriter::finish`) into `state`'s snapshot.
    pub fn finish(mut self, state: &State) -> Result<(), StateError> {
        drop(self.queue.take());
        let writer = self.thread.take().map(JoinHandle::join);
        self.check()?;
        match writer {
            Some(Ok(writer)) => writer.finish(state),
            _ => Err(stopped()),
        }
    }
}

fn stopped() -> StateError {
    StateError::Write {
        path: "(state writer thread)".into(),
        source: std::io::Error::other("the state writer stopped after a failed write"),
    }
}

impl Drop for Recorder {
    /// An apply that ends early (an error) still gets its queued changes
    /// written; only the fold is left to the next apply.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it is asked to write; fails at the `fail_at`th write.
    struct Log {
        writes: Arc<Mutex<Vec<Vec<u64>>>>,
        fail_at: usize,
    }

    impl StateWriter for Log {
        fn write(&mut self, changes: &[Delta]) -> Result<(), StateError> {
            let mut writes = self.writes.lock().unwrap();
            if writes.len() + 1 == self.fail_at {
                return Err(StateError::Write {
                    path: "log".into(),
                    source: std::io::Error::other("disk full"),
                });
            }
            writes.push(changes.iter().map(|d| d.serial).collect());
            // A slow disk: later changes queue up meanwhile.
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(())
        }

        fn finish(self: Box<Self>, state: &State) -> Result<(), StateError> {
            self.writes.lock().unwrap().push(vec![state.serial + 1000]);
            Ok(())
        }
    }

    fn delta(serial: u64) -> Delta {
        Delta {
            target: None,
            serial,
            ..Delta::default()
        }
    }

    #[test]
    fn changes_are_written_in_order_in_batches_then_folded() {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let recorder = Recorder::start(Box::new(Log {
            writes: writes.clone(),
            fail_at: 0,
        }));
        for serial in 1..=50 {
            recorder.record(delta(serial)).unwrap();
        }
        let mut state = State::new("p");
        state.serial = 50;
        recorder.finish(&state).unwrap();
        let writes = writes.lock().unwrap();
        let serials: Vec<u64> = writes[..writes.len() - 1].iter().flatten().copied().collect();
        assert_eq!(serials, (1..=50).collect::<Vec<_>>());
        assert!(writes.len() < 10, "batched: {writes:?}");
        assert_eq!(writes.last(), Some(&vec![1050]), "folded last");
    }

    #[test]
    fn a_failed_write_stops_the_apply_with_its_error() {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let recorder = Recorder::start(Box::new(Log {
            writes: writes.clone(),
            fail_at: 1,
        }));
        recorder.record(delta(1)).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let error = loop {
            if let Err(error) = recorder.record(delta(2)) {
                break error;
            }
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert!(error.to_string().contains("disk full"), "{error}");
        assert!(recorder.finish(&State::new("p")).is_err());
    }
}
