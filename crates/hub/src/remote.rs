//! Checkpoints read over HTTP: safetensors and GGUF headers by range requests (through the
//! same checked parsers as local files), and weights downloaded in chunks that resume.

use crate::http::Ranged;
use crate::{Snapshot, Why};
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
struct RangedFile<'a, 's> {
    s: &'a Snapshot<'s>,
    file: &'a str,
    len: u64,
    pos: u64,
    buf: Vec<u8>,
    start: u64,
    block: u64,
}

impl Read for RangedFile<'_, '_> {
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

impl Seek for RangedFile<'_, '_> {
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
    let mut r = RangedFile {
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

/// `file` downloaded into the cache in chunks, resuming `blobs/HASH.incomplete` (the name
/// Python's client uses, so either resumes the other's), checked against the hash its ETag names,
/// then linked from the snapshot folder as Python links it. `cap`: the most bytes the file may
/// have (a small file); `check`: a cached copy's bytes are hashed before they are trusted.
pub(crate) fn download(
    s: &Snapshot,
    file: &str,
    cap: Option<u64>,
    check: bool,
    progress: &(dyn Fn(&str, u64, u64) + Sync),
) -> Result<PathBuf, Error> {
    s.note_read(file);
    if let Some(p) = s.cached(file, check) {
        return Ok(p);
    }
    if s.hub.offline {
        return Err(s.hub.error(&s.id, Some(file), Why::NotCached));
    }
    let meta = s.meta(file)?;
    let fail = |why: Why| s.hub.error(&s.id, Some(file), why);
    if let Some(cap) = cap.filter(|&c| meta.size > c) {
        return Err(fail(Why::TooLarge(format!(
            "the file is {} bytes; anatomy reads at most {cap} of a file of its kind",
            meta.size
        ))));
    }
    if s.cache.blob(&meta.hash, check).is_none() {
        let partial = fill(s, file, &meta, progress).map_err(fail)?;
        s.cache
            .finish(&partial, &meta.hash)
            .map_err(|e| fail(Why::Io(e)))?;
    }
    let link = s
        .cache
        .link(&s.commit, file, &meta.hash)
        .map_err(|e| fail(Why::Io(e)))?;
    s.cache
        .set_reference(s.id.revision(), &s.commit)
        .map_err(|e| fail(Why::Io(e)))?;
    Ok(link)
}

/// The partial download of `meta`'s blob brought to its whole size and checked against its
/// hash; a partial download that turns out wrong is removed, so the next run starts afresh.
fn fill(
    s: &Snapshot,
    file: &str,
    meta: &crate::http::Meta,
    progress: &(dyn Fn(&str, u64, u64) + Sync),
) -> Result<PathBuf, Why> {
    let size = meta.size;
    let (mut out, partial) = s.cache.partial(&meta.hash).map_err(Why::Io)?;
    let io = |e: std::io::Error| Why::Io(format!("{}: {e}", partial.display()));
    let mut hasher = meta.hash.hasher(size);
    let mut have = out.metadata().map_err(io)?.len();
    if have > size {
        have = 0;
    }
    out.set_len(have).map_err(io)?;
    // What a previous run wrote counts towards the hash (the whole file is checked at the end).
    out.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut held = (&out).take(have);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = held.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    out.seek(SeekFrom::Start(have)).map_err(io)?;
    progress(file, have, size);
    let mut sink = |bytes: &[u8], have: &mut u64| -> Result<(), Why> {
        out.write_all(bytes).map_err(io)?;
        hasher.update(bytes);
        *have += bytes.len() as u64;
        progress(file, *have, size);
        Ok(())
    };
    let result = (|| {
        while have < size {
            let range = have..size.min(have + CHUNK);
            let url = s.url(file).map_err(|e| Why::Other(e.message.clone()))?;
            match s.hub.http.range(url, range.clone(), size)? {
                Ranged::Part(mut r) => {
                    let end = range.end;
                    while have < end {
                        let n = r.read(&mut buf[..((end - have) as usize).min(1 << 20)])?;
                        if n == 0 {
                            return Err(Why::Corrupt(format!(
                                "sent {} of the {} bytes of a range",
                                have - range.start,
                                end - range.start
                            )));
                        }
                        sink(&buf[..n], &mut have)?;
                    }
                }
                // The server ignores Range: the whole file, read once, the bytes held skipped.
                Ranged::Whole(mut r) => {
                    let mut at = 0u64;
                    loop {
                        let n = r.read(&mut buf)?;
                        if n == 0 {
                            break;
                        }
                        let (from, to) = (at, at + n as u64);
                        at = to;
                        if to > size {
                            return Err(Why::Corrupt(format!(
                                "sent more than the {size} bytes the file has"
                            )));
                        }
                        if to > have {
                            let skip = have.saturating_sub(from) as usize;
                            sink(&buf[skip..n], &mut have)?;
                        }
                    }
                    if have < size {
                        return Err(Why::Corrupt(format!(
                            "sent {have} of the {size} bytes of the file"
                        )));
                    }
                }
            }
        }
        Ok(())
    })();
    s.transferred.fetch_add(have, Ordering::Relaxed);
    result?;
    out.sync_all().map_err(io)?;
    if !hasher.matches(&meta.hash) {
        drop(out);
        let _ = std::fs::remove_file(&partial);
        return Err(Why::Corrupt(format!(
            "its {size} bytes do not have the hash its ETag names ({})",
            meta.hash.hex()
        )));
    }
    Ok(partial)
}
