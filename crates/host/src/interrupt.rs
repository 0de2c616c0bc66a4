//! A request to stop one run: a [`StopToken`] belongs to the run (or the runs of one call:
//! a sweep's, a curve's) it was installed for with [`scope`], on the thread that runs it and
//! on the threads that run inherits it to ([`current`] hands it over). The trace readers poll
//! it at every batch and the simulation loops every few thousand operations, which then end
//! the run early; the caller that stopped it turns the early end into its own error. A stop
//! in one run never reaches another: Python threads each running pagelab have a token each.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The stop request of one run, shared by the threads working for it.
#[derive(Clone, Debug, Default)]
pub struct StopToken(Arc<AtomicBool>);

impl StopToken {
    pub fn new() -> StopToken {
        StopToken::default()
    }
    /// Asks the run holding this token to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether this run was asked to stop.
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<StopToken>> = const { RefCell::new(None) };
}

/// Runs `f` with `token` as this thread's stop token (none: nothing can stop it), then
/// restores the one before, also when `f` panics.
pub fn scope<T>(token: Option<StopToken>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<StopToken>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), token));
    let _restore = Restore(prev);
    f()
}

/// This thread's stop token, to hand to a thread working for the same run.
pub fn current() -> Option<StopToken> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Asks the run of this thread to stop (a Python policy's hook saw Ctrl-C).
pub fn request() {
    if let Some(t) = current() {
        t.stop();
    }
}

/// Whether the run of this thread was asked to stop.
#[inline]
pub fn requested() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|t| t.stopped()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_reaches_the_runs_of_its_token_only() {
        let (a, b) = (StopToken::new(), StopToken::new());
        let other = std::thread::spawn({
            let b = b.clone();
            move || {
                scope(Some(b), || {
                    (0..200).any(|_| {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        requested()
                    })
                })
            }
        });
        scope(Some(a.clone()), || {
            request();
            assert!(requested());
            let inherited = current();
            assert!(std::thread::spawn(move || scope(inherited, requested)).join().unwrap(), "a helper thread sees its run's stop");
        });
        assert!(a.stopped() && !b.stopped());
        assert!(!other.join().unwrap(), "another run's thread never sees the stop");
        assert!(!requested(), "outside a scope nothing is stopped");
    }
}
