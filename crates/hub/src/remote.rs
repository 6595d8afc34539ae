//! Checkpoints read over HTTP: safetensors and GGUF headers by range requests (through the
//! same checked parsers as local files), and weights downloaded in chunks that resume.

use crate::Snapshot;
use anatomy_checkpoint::safetensors::{self, Files, MAX_HEADER};
use anatomy_checkpoint::{Checkpoint, Problem, Stored};
use anatomy_core::Error;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first request for a safetensors file: most headers fit, so most files need one.
const FIRST: u64 = 64 << 10;
/// Shard headers fetched at once.
const PARALLEL: usize = 8;
/// A download's unit of progress and of resumption.
const CHUNK: u64 = 32 << 20;

pub(crate) fn read_local(path: &Path, range: std::ops::Range<u64>) -> Result<Vec<u8>, Error> {
    let shown = path.display().to_string();
    let mut f =
        std::fs::File::open(path).map_err(|e| Error::file(&shown, format!("cannot open: {e}")))?;
    f.seek(SeekFrom::Start(range.start))
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    let mut out = Vec::new();
    f.take(range.end.saturating_sub(range.start))
        .read_to_end(&mut out)
        .map_err(|e| Error::file(&shown, format!("cannot read: {e}")))?;
    Ok(out)
}

/// One safetensors header: its length first, then the header; both bounded by the file's size.
fn header(s: &Snapshot, file: &str) -> Result<(Vec<Stored>, Vec<Problem>), Error> {
    let shown = s.shown(file);
    let len = s.size(file)?;
    let mut head = s.range(file, 0..len.min(FIRST))?;
    if head.len() >= 8 {
        let n = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let end = 8 + n;
        if n <= MAX_HEADER && end <= len && end > head.len() as u64 {
            head.extend(s.range(file, head.len() as u64..end)?);
        }
    }
    safetensors::parse_header(&head, len, &shown)
}

struct Remote<'a, 's> {
    s: &'a Snapshot<'s>,
    progress: &'a (dyn Fn(usize, usize) + Sync),
}

impl Files for Remote<'_, '_> {
    fn shown(&self, name: &str) -> String {
        self.s.shown(name)
    }
    fn exists(&self, name: &str) -> bool {
        self.s.has(name)
    }
    fn json(&self, name: &str) -> Result<serde_json::Value, Error> {
        safetensors::read_json(&self.s.fetch(name)?)
    }
    fn safetensors(&self) -> Result<Vec<String>, Error> {
        Ok(self
            .s
            .files
            .iter()
            .filter(|f| f.ends_with(".safetensors") && !f.contains('/'))
            .cloned()
            .collect())
    }
    fn headers(&self, names: &[String]) -> Result<Vec<safetensors::Header>, Error> {
        // Up to PARALLEL workers take the next file until none is left; results keep the order.
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        (self.progress)(0, names.len());
        let mut read: Vec<(usize, Result<safetensors::Header, Error>)> =
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..PARALLEL.min(names.len()))
                    .map(|_| {
                        scope.spawn(|| {
                            let mut mine = Vec::new();
                            loop {
                                let i = next.fetch_add(1, Ordering::Relaxed);
                                let Some(name) = names.get(i) else { break mine };
                                mine.push((i, header(self.s, name)));
                                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                                (self.progress)(n, names.len());
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().expect("a header worker panicked"))
                    .collect()
            });
        read.sort_by_key(|(i, _)| *i);
        read.into_iter().map(|(_, r)| r).collect()
    }
}

pub(crate) fn safetensors(
    s: &Snapshot,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Checkpoint, Error> {
    safetensors::assemble(&Remote { s, progress }, &s.id.repo)
}

/// A GGUF file as a reader that fetches blocks on demand, each twice the last (up to 8 MiB):
/// the header is read front to back, and its size is not known until it has been read.
struct Ranged<'a, 's> {
    s: &'a Snapshot<'s>,
    file: &'a str,
    len: u64,
    pos: u64,
    buf: Vec<u8>,
    start: u64,
    block: u64,
}

impl Read for Ranged<'_, '_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len {
            return Ok(0);
        }
        let end = self.start + self.buf.len() as u64;
        if self.pos < self.start || self.pos >= end {
            let to = self.len.min(self.pos + self.block.max(out.len() as u64));
            self.buf = self
                .s
                .range(self.file, self.pos..to)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            self.start = self.pos;
            self.block = (self.block * 2).min(8 << 20);
            if self.buf.is_empty() {
                return Err(std::io::Error::other(
                    "the server sent no bytes for a range",
                ));
            }
        }
        let at = (self.pos - self.start) as usize;
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Ranged<'_, '_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let p = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        self.pos = p.ok_or_else(|| std::io::Error::other("seek before the start"))?;
        Ok(self.pos)
    }
}

pub(crate) fn gguf(s: &Snapshot, file: &str) -> Result<Checkpoint, Error> {
    let len = s.size(file)?;
    let mut r = Ranged {
        s,
        file,
        len,
        pos: 0,
        buf: Vec::new(),
        start: 0,
        block: 256 << 10,
    };
    anatomy_checkpoint::gguf::read(&mut r, len, &s.shown(file))
}

/// `file` downloaded into the cache in chunks, resuming `blobs/ETAG.incomplete` (the name
/// Python's client uses, so either resumes the other's), then linked from the snapshot folder
/// as Python links it.
pub(crate) fn download(
    s: &Snapshot,
    file: &str,
    progress: &(dyn Fn(&str, u64, u64) + Sync),
) -> Result<PathBuf, Error> {
    if let Some(p) = s.cached(file) {
        s.note_read(file);
        return Ok(p);
    }
    if s.hub.offline {
        return s.fetch(file);
    }
    let meta = s.meta(file)?;
    let size = meta.size;
    let folder = s.hub.folder(&s.id);
    let io = |what: &str, p: &Path, e: std::io::Error| {
        Error::file(
            p.display().to_string(),
            format!("cannot {what} in the cache: {e}"),
        )
    };
    let etag = meta.etag.replace(['/', '\\'], "_");
    let blob = folder.join("blobs").join(&etag);
    if !blob.is_file() {
        std::fs::create_dir_all(folder.join("blobs"))
            .map_err(|e| io("create a folder", &blob, e))?;
        let partial = folder.join("blobs").join(format!("{etag}.incomplete"));
        let mut have = std::fs::metadata(&partial).map_or(0, |m| m.len());
        if have > size {
            have = 0;
        }
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&partial)
            .map_err(|e| io("write", &partial, e))?;
        out.set_len(have).map_err(|e| io("write", &partial, e))?;
        out.seek(SeekFrom::Start(have))
            .map_err(|e| io("write", &partial, e))?;
        progress(file, have, size);
        while have < size {
            let to = size.min(have + CHUNK);
            let bytes = s.range(file, have..to)?;
            if bytes.is_empty() {
                return Err(Error::file(
                    s.shown(file),
                    "the server sent no bytes for a range; try again",
                ));
            }
            out.write_all(&bytes)
                .map_err(|e| io("write", &partial, e))?;
            have += bytes.len() as u64;
            progress(file, have, size);
        }
        out.sync_all().map_err(|e| io("write", &partial, e))?;
        std::fs::rename(&partial, &blob).map_err(|e| io("write", &blob, e))?;
    }
    let link = folder.join("snapshots").join(&s.commit).join(file);
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io("create a folder", parent, e))?;
    }
    let _ = std::fs::remove_file(&link);
    point(&blob, &link, file).map_err(|e| io("link", &link, e))?;
    s.note_read(file);
    Ok(link)
}

/// The snapshot entry for `file`: a relative symlink to its blob, as Python makes it.
#[cfg(unix)]
fn point(blob: &Path, link: &Path, file: &str) -> std::io::Result<()> {
    let up = "../".repeat(2 + file.matches('/').count());
    let name = blob
        .file_name()
        .expect("a blob has a name")
        .to_string_lossy();
    std::os::unix::fs::symlink(format!("{up}blobs/{name}"), link)
}

#[cfg(not(unix))]
fn point(blob: &Path, link: &Path, _file: &str) -> std::io::Result<()> {
    std::fs::copy(blob, link).map(|_| ())
}
