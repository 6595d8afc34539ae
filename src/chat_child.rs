//! A chat template rendered in a child process of bounded memory and time. A template comes
//! with the checkpoint and is a program: minijinja's fuel bounds its instructions, but not what
//! one instruction can build (a list added to itself 40 times is 2^40 items, in a few thousand
//! instructions). The child is this same binary, started with `CHILD` set, its address space
//! capped by setrlimit; the parent gives it the template on stdin, reads the text on stdout,
//! and stops it at the deadline.

use anatomy_core::Error;
use anatomy_exec::chat::Template;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The variable that makes this binary a template child.
const CHILD: &str = "ANATOMY_CHAT_TEMPLATE_CHILD";
/// The child's address space: the binary and its libraries take about 100 MB of it.
pub const MEMORY: u64 = 1 << 30;
/// The child's time: real templates render one message in milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(5);
/// The largest text a template may make, and the largest request (template and prompt).
const MAX_TEXT: u64 = 16 << 20;

/// In the child: render the template on stdin, write the text (or the error) as JSON on
/// stdout. Returns false when this process is not a child.
pub fn serve_if_child() -> bool {
    if std::env::var_os(CHILD).is_none() {
        return false;
    }
    let mut input = String::new();
    let _ = std::io::stdin()
        .take(MAX_TEXT * 2)
        .read_to_string(&mut input);
    let v: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    let t = Template {
        source: text("source"),
        bos: text("bos"),
        eos: text("eos"),
        file: text("file"),
    };
    let images = v["images"].as_u64().unwrap_or(0) as usize;
    let out = match t.render(&text("user"), images) {
        Ok(s) => serde_json::json!({ "text": s }),
        Err(e) => serde_json::json!({ "field": e.field, "message": e.message }),
    };
    let _ = std::io::stdout().write_all(out.to_string().as_bytes());
    true
}

/// `t` rendered for one user message (with `images` image parts before its text), in a child
/// of `MEMORY` bytes and `DEADLINE`.
pub fn render(t: &Template, user: &str, images: usize) -> Result<String, Error> {
    let fail = |m: String| Error::new(&t.file, "chat_template", m);
    let exe = std::env::current_exe()
        .map_err(|e| fail(format!("cannot start a process to render it: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: MEMORY as libc::rlim_t,
                    rlim_max: MEMORY as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(format!("cannot start a process to render it: {e}")))?;
    let request = serde_json::json!({
        "source": t.source, "bos": t.bos, "eos": t.eos, "file": t.file, "user": user,
        "images": images,
    })
    .to_string();
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = (&mut stdout).take(MAX_TEXT * 2).read_to_end(&mut out);
        out
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| fail(format!("cannot wait for its process: {e}")))?
        {
            break s;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!(
                "the chat template ran for more than {} s; anatomy stops templates there",
                DEADLINE.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(fail(format!(
            "the chat template needed more than {} MiB of memory (its process ended with {status}); anatomy stops templates there",
            MEMORY >> 20
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out)
        .map_err(|_| fail("the chat template's process answered nothing readable".into()))?;
    match v["text"].as_str() {
        Some(s) if s.len() as u64 <= MAX_TEXT => Ok(s.to_string()),
        Some(s) => Err(fail(format!(
            "the chat template made {} bytes of text for one message; anatomy takes at most {MAX_TEXT}",
            s.len()
        ))),
        None => Err(Error::new(
            &t.file,
            v["field"].as_str().unwrap_or("chat_template"),
            v["message"].as_str().unwrap_or("the chat template failed"),
        )),
    }
}
