//! `anatomy` run as a user runs it, measured: exit code, output, wall time, and its own peak
//! resident memory, for tests that bound what hostile input may cost. The peak is VmHWM of
//! /proc/PID/status read every 2 ms while the process lives (wait4's ru_maxrss would count the
//! test process's memory, which the child shares until it execs).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
    /// Peak resident memory of the process, in KiB.
    pub rss_kb: u64,
}

/// The environment's Hub settings, which a test's run must not inherit.
pub const HUB_ENV: &[&str] = &[
    "HF_TOKEN",
    "HF_TOKEN_PATH",
    "HF_HUB_OFFLINE",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
    "HF_ENDPOINT",
    "XDG_CACHE_HOME",
];

/// The binary, with no Hub settings from the environment.
#[allow(dead_code)]
pub fn anatomy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_anatomy"));
    for v in HUB_ENV {
        c.env_remove(v);
    }
    c
}

pub fn run(mut c: Command) -> Ran {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = c.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut err, &mut s).ok();
        s
    });
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // Only once the child runs anatomy: before its exec it shares our memory.
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                if comm.trim() == "anatomy" {
                    let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
                    let hwm = status.unwrap_or_default().lines().find_map(|l| {
                        l.strip_prefix("VmHWM:")?
                            .trim()
                            .strip_suffix("kB")?
                            .trim()
                            .parse()
                            .ok()
                    });
                    peak = peak.max(hwm.unwrap_or(0));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    let status = child.wait().unwrap();
    let took = start.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    Ran {
        code: status.code(),
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
        took,
        rss_kb: watch.join().unwrap(),
    }
}

#[allow(dead_code)]
impl Ran {
    pub fn ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self
    }
    /// Exit 2 with an error that says `what`, and no panic.
    pub fn refused(&self, what: &str) -> &Self {
        assert_eq!(
            self.code,
            Some(2),
            "exit {:?}; {}{}",
            self.code,
            self.stdout,
            self.stderr
        );
        assert!(self.stderr.contains(what), "{}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self
    }
}
