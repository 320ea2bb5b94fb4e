//! A one-shot answer from the replay writer thread to a caller that awaits it without holding
//! a thread (an async request): the writer sets the value and wakes the task; a sender dropped
//! unanswered (its batch panicked) resolves the receiver to `None`. std only.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

struct Slot<T> {
    value: Option<T>,
    closed: bool,
    waker: Option<Waker>,
}

type Shared<T> = Arc<Mutex<Slot<T>>>;

fn lock<T>(shared: &Shared<T>) -> MutexGuard<'_, Slot<T>> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// The writer's end.
pub(crate) struct Sender<T>(Shared<T>);

/// The caller's end: a future of the answer (`None` when the writer dropped it unanswered).
pub(crate) struct Receiver<T>(Shared<T>);

pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Mutex::new(Slot {
        value: None,
        closed: false,
        waker: None,
    }));
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<T> Sender<T> {
    /// Answers (a second answer replaces an unread first; the writer sends one).
    pub(crate) fn send(&self, value: T) {
        let waker = {
            let mut slot = lock(&self.0);
            slot.value = Some(value);
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut slot = lock(&self.0);
            slot.closed = true;
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut slot = lock(&self.0);
        if let Some(value) = slot.value.take() {
            return Poll::Ready(Some(value));
        }
        if slot.closed {
            return Poll::Ready(None);
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Flag(std::sync::atomic::AtomicBool);

    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn poll<T>(r: &mut Receiver<T>, flag: &Arc<Flag>) -> Poll<Option<T>> {
        let waker = Waker::from(Arc::clone(flag));
        Pin::new(r).poll(&mut Context::from_waker(&waker))
    }

    /// Pending until answered, the task woken by the answer; a sender dropped unanswered
    /// resolves to `None` and wakes the task too.
    #[test]
    fn answers_wake_and_a_dropped_sender_closes() {
        let flag = Arc::new(Flag(false.into()));
        let (tx, mut rx) = channel::<u8>();
        assert!(poll(&mut rx, &flag).is_pending());
        std::thread::spawn(move || tx.send(7)).join().unwrap();
        assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst), "woken");
        assert_eq!(poll(&mut rx, &flag), Poll::Ready(Some(7)));

        let flag = Arc::new(Flag(false.into()));
        let (tx, mut rx) = channel::<u8>();
        assert!(poll(&mut rx, &flag).is_pending());
        drop(tx);
        assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst), "woken");
        assert_eq!(poll(&mut rx, &flag), Poll::Ready(None));
    }
}
