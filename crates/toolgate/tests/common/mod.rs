//! Shared by the process tests: starting `toolgate serve` and finding the
//! address it listens on.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A running `toolgate serve`, killed when dropped.
pub(crate) struct Daemon {
    /// The process.
    pub child: Child,
    /// `HOST:PORT` it announced.
    pub addr: String,
    /// Everything it wrote to stderr after the announcement, so far.
    pub log: Arc<Mutex<String>>,
}

impl Daemon {
    /// Its stderr so far, once `want` is in it, or after 10 s (then the
    /// caller's assertion shows what was there).
    #[allow(dead_code)] // not every test binary reads the log
    pub(crate) fn log_once(&self, want: &str) -> String {
        for _ in 0..200 {
            let log = self.log.lock().unwrap().clone();
            if log.contains(want) {
                return log;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `toolgate serve ARGS` with the toolgate environment cleared and
/// `env` set, and reads its announcement; `Err` carries stderr when it
/// exits instead.
pub(crate) fn spawn<V: AsRef<OsStr>>(args: &[&str], env: &[(&str, V)]) -> Result<Daemon, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve").args(args);
    cmd.env_remove("TOOLGATE_AGENT_TOKEN")
        .env_remove("TOOLGATE_OPERATOR_TOKEN")
        .env_remove("TOOLGATE_DATA_DIR")
        .env_remove("TOOLGATE_STORE")
        .env_remove("TOOLGATE_POLICY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        seen.push_str(&line);
        seen.push('\n');
        if let Some(rest) = line.strip_prefix("toolgate serve: listening on http://") {
            let addr = rest.trim().to_string();
            // Keep draining stderr so the daemon never blocks on a full
            // pipe, and keep it for tests that read the log.
            let log = Arc::new(Mutex::new(String::new()));
            let kept = log.clone();
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    let mut k = kept.lock().unwrap();
                    k.push_str(&line);
                    k.push('\n');
                }
            });
            return Ok(Daemon { child, addr, log });
        }
    }
    let _ = child.wait();
    Err(seen)
}
