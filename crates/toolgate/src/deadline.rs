//! The hook's own deadline, and the rule that exactly one answer leaves
//! the process.
//!
//! Some runtimes run a call whose hook times out or crashes, so a hook must
//! answer with a denial before the runtime's timeout, whatever it is still
//! waiting for (a daemon, a lock, a person). On Unix the deadline is a
//! `SIGALRM` timer whose handler writes an answer rendered in advance and
//! exits: a watchdog thread cost every hook process about 0.1 ms of wall
//! time and 0.2 ms of CPU (its creation, its stack, a malloc arena of its
//! own) for a deadline that almost never fires. Elsewhere, or if the timer
//! cannot be armed, a thread keeps the deadline instead.
//!
//! Whoever answers first — the decision, the deadline, the panic guard —
//! claims the answer with [`claim`]; the others stay silent.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set by the first [`claim`].
static CLAIMED: AtomicBool = AtomicBool::new(false);

/// What the deadline writes: rendered before the timer is armed, so the
/// signal handler only reads it.
static DEADLINE_ANSWER: OnceLock<Rendered> = OnceLock::new();

/// An answer as bytes, ready for `write(2)`.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// For standard error (may be empty).
    pub stderr: Vec<u8>,
    /// For standard output.
    pub stdout: Vec<u8>,
    /// The exit status.
    pub exit: u8,
}

/// Claims the right to answer: `true` for the first caller in the process,
/// `false` for every later one (which must then neither print nor exit
/// with an answer of its own).
pub(crate) fn claim() -> bool {
    !CLAIMED.swap(true, Ordering::AcqRel)
}

/// After `after`, unless someone claimed the answer first, writes `answer`
/// and exits with its status. Called once per process.
pub(crate) fn arm(after: Duration, answer: Rendered) {
    if DEADLINE_ANSWER.set(answer).is_err() {
        // Armed already: the first deadline stands.
        return;
    }
    #[cfg(unix)]
    if timer::arm(after).is_ok() {
        return;
    }
    std::thread::spawn(move || {
        std::thread::sleep(after);
        expire();
    });
}

/// The deadline has passed: answer with the rendered denial and exit,
/// unless an answer was claimed already (then return: its owner is
/// finishing). Does only what is safe in a signal handler: an atomic swap,
/// an atomic load, `write(2)` and `_exit(2)`.
fn expire() {
    if !claim() {
        return;
    }
    let Some(answer) = DEADLINE_ANSWER.get() else {
        // Not reachable: the answer is set before the deadline is armed.
        exit_now(2);
    };
    write_all(2, &answer.stderr);
    write_all(1, &answer.stdout);
    exit_now(answer.exit);
}

#[cfg(unix)]
fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        #[allow(unsafe_code)]
        // SAFETY: `bytes` is a live slice; write(2) reads at most its
        // length from its start and is async-signal-safe.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n == 0
            || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

#[cfg(not(unix))]
fn write_all(fd: i32, bytes: &[u8]) {
    use std::io::Write;
    let _ = if fd == 2 {
        std::io::stderr().write_all(bytes)
    } else {
        std::io::stdout()
            .write_all(bytes)
            .and_then(|()| std::io::stdout().flush())
    };
}

fn exit_now(code: u8) -> ! {
    #[cfg(unix)]
    {
        #[allow(unsafe_code)]
        // SAFETY: _exit(2) ends the process without running anything else
        // (no destructors, no atexit handlers, no stdio flush), which is
        // what makes it usable from a signal handler; every answer byte was
        // written with write(2), unbuffered.
        unsafe {
            libc::_exit(i32::from(code))
        }
    }
    #[cfg(not(unix))]
    std::process::exit(i32::from(code))
}

#[cfg(unix)]
mod timer {
    use std::time::Duration;

    extern "C" fn on_alarm(_signal: libc::c_int) {
        super::expire();
    }

    /// Installs the `SIGALRM` handler and starts a one-shot real-time
    /// timer of `after`.
    pub(super) fn arm(after: Duration) -> std::io::Result<()> {
        #[allow(unsafe_code)]
        // SAFETY: the sigaction struct is zeroed (a valid value for every
        // field: empty mask, no flags) and then filled in; the handler is
        // an `extern "C" fn(c_int)` that only calls async-signal-safe code
        // (`super::expire`). setitimer gets a valid itimerval and a null
        // old-value pointer, which it permits.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let value = libc::timeval {
                tv_sec: after.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_usec: after.subsec_micros().max(1) as libc::suseconds_t,
            };
            let timer = libc::itimerval {
                it_interval: libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                },
                it_value: value,
            };
            if libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_claimed_every_later_claim_loses() {
        // The claim is process-wide, so whether this first one wins depends
        // on the tests run before it; after it, none can win.
        let _ = claim();
        assert!(!claim());
        assert!(!claim());
    }
}
