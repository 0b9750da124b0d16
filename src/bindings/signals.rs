//! Where a blocking call lets Python handle signals: on the thread Python runs signal
//! handlers on, it wakes every 50 ms (one ticker thread for every call) to check them, so
//! that Ctrl-C interrupts it.

use std::time::Duration;

use super::fork;

/// Wakes blocked calls every 50 ms so they can let Python handle signals. A tokio timer per
/// call would do the same but costs about a millisecond a call (each one has to wake the
/// runtime's timer driver from outside it); one thread ticking for every call costs nothing
/// per call. One ticker per process (a forked child starts its own).
pub fn signal_tick() -> &'static tokio::sync::Notify {
    // One per process generation: a forked child starts its own (the parent's thread is not
    // in the child).
    static TICKER: fork::PerProcess<tokio::sync::Notify> = fork::PerProcess::new();
    TICKER.get_or_make(tokio::sync::Notify::new, |tick| {
        let spawned = std::thread::Builder::new()
            .name("pushwire-signals".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_millis(50));
                tick.notify_waiters();
            });
        if let Err(e) = spawned {
            // Calls still work; Ctrl-C just cannot interrupt them.
            log::warn!(target: "pushwire", "the signal thread could not start: {e}");
        }
    })
}

/// Whether this thread is the one Python runs signal handlers on: the process's main OS
/// thread (after a fork, the thread that forked, which Python makes its main thread too).
/// Elsewhere `check_signals` does nothing, so a blocked call need not wake for it: 200
/// threads waiting on a slow service cost a tenth of a core in wake-ups and GIL hand-offs
/// otherwise. Asked of the OS, not of `threading`: no Python code runs (a signal pending
/// would run its handler there), and under gevent every greenlet of the main thread is on
/// it. Where the OS cannot say, every thread wakes.
pub fn handles_signals() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: both calls only read the calling thread's and process's ids.
        unsafe { libc::gettid() == libc::getpid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}
