//! The Hub cache in Python's layout (`models--OWNER--NAME/{blobs,snapshots,refs}`), so a file
//! either downloaded is the other's. Nothing is written outside a repo's folder: every path is
//! made from checked parts (a repo id, a commit, a hash, a repo path), folders are checked to
//! resolve inside the folder once made, and files are opened without following symlinks.

use crate::safe::{self, Hash};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
pub fn home() -> PathBuf {
    if let Some(h) = std::env::var_os("HF_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    cache.join("huggingface")
}

/// `HF_HUB_CACHE`, else `HUGGINGFACE_HUB_CACHE`, else `$HF_HOME/hub`.
pub fn dir() -> PathBuf {
    ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"]
        .iter()
        .find_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join("hub"))
}

/// The most files an offline snapshot listing takes, and how deep it goes.
const MAX_FILES: usize = 100_000;
const MAX_DEPTH: usize = 32;

/// One repo's folder in the cache.
pub struct Repo {
    pub folder: PathBuf,
}

fn io(what: &str, p: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot {what} {} in the cache: {e}", p.display())
}

impl Repo {
    pub fn new(cache: &Path, repo: &str) -> Repo {
        // `repo` is a checked id (owner/name of letters, digits, `-_.`), so this is one component.
        Repo {
            folder: cache.join(format!("models--{}", repo.replace('/', "--"))),
        }
    }

    /// `sub` (relative, from checked parts) made inside the folder one component at a time,
    /// each one a real folder: a planted symlink or file on the way is refused, not followed.
    fn made(&self, sub: &Path) -> Result<PathBuf, String> {
        let mut p = self.folder.parent().unwrap_or(Path::new(".")).to_path_buf();
        let name = self.folder.file_name().expect("a repo folder has a name");
        for c in std::iter::once(Path::new(name)).chain(sub.iter().map(Path::new)) {
            p.push(c);
            match p.symlink_metadata() {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "{} is in the cache's way (a symlink or file where a folder belongs); remove it",
                        p.display()
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir_all(&p).map_err(|e| io("create", &p, e))?
                }
                Err(e) => return Err(io("check", &p, e)),
            }
        }
        Ok(p)
    }

    /// Does `p` resolve to a regular file inside the repo's folder?
    fn inside(&self, p: &Path) -> bool {
        let (Ok(root), Ok(real)) = (self.folder.canonicalize(), p.canonicalize()) else {
            return false;
        };
        real.starts_with(root) && real.is_file()
    }

    /// The snapshot entry of `file` at `commit`, if the cache holds it (inside the folder; a
    /// blob whose name is a hash must have that hash when `check` asks, so a file the cache was
    /// once given wrongly is fetched again rather than trusted).
    pub fn cached(&self, commit: &str, file: &str, check: bool) -> Option<PathBuf> {
        if !safe::commit(commit) || !safe::repo_path(file) {
            return None;
        }
        let p = self.folder.join("snapshots").join(commit).join(file);
        if !self.inside(&p) {
            return None;
        }
        if check {
            let real = p.canonicalize().ok()?;
            let name = real.file_name()?.to_str()?;
            if let Some(hash) = Hash::from_etag(name) {
                if !has_hash(&real, &hash) {
                    return None;
                }
            }
        }
        Some(p)
    }

    /// The commit `refs/REV` holds, if it holds one.
    pub fn reference(&self, rev: &str) -> Option<String> {
        let p = self.folder.join("refs").join(rev);
        if !self.inside(&p) {
            return None;
        }
        let mut s = String::new();
        std::fs::File::open(&p)
            .ok()?
            .take(128)
            .read_to_string(&mut s)
            .ok()?;
        Some(s.trim().to_string()).filter(|c| safe::commit(c))
    }

    /// `refs/REV` pointing at `commit`, as Python keeps it (REV is a checked revision).
    pub fn set_reference(&self, rev: &str, commit: &str) -> Result<(), String> {
        if rev == commit || !safe::commit(commit) {
            return Ok(());
        }
        let rel = Path::new("refs").join(rev);
        let p = self.folder.join(&rel);
        let dir = self.made(rel.parent().expect("refs/REV has a parent"))?;
        let name = rel
            .file_name()
            .ok_or_else(|| io("write", &p, "no file name"))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".anatomy-ref-")
            .tempfile_in(&dir)
            .map_err(|e| io("write", &p, e))?;
        tmp.write_all(commit.as_bytes())
            .map_err(|e| io("write", &p, e))?;
        // A rename replaces a planted symlink rather than writing through it.
        tmp.persist(dir.join(name))
            .map_err(|e| io("write", &p, e.error))?;
        Ok(())
    }

    /// Every file of the snapshot at `commit`, as repo paths: symlinked folders are not entered
    /// (a link `a -> .` would loop), entries that lead out of the folder are left out.
    pub fn list(&self, commit: &str) -> Vec<String> {
        let mut out = Vec::new();
        if safe::commit(commit) {
            let snap = self.folder.join("snapshots").join(commit);
            if snap
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_dir())
            {
                self.walk(&snap, &snap, 0, &mut out);
            }
        }
        out.sort();
        out
    }

    fn walk(&self, root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            if out.len() >= MAX_FILES {
                return;
            }
            let Ok(kind) = e.file_type() else { continue };
            let p = e.path();
            if kind.is_dir() {
                if depth < MAX_DEPTH {
                    self.walk(root, &p, depth + 1, out);
                }
            } else if self.inside(&p) {
                if let Some(rel) = p.strip_prefix(root).ok().and_then(|r| r.to_str()) {
                    let rel = rel.replace('\\', "/");
                    if safe::repo_path(&rel) {
                        out.push(rel);
                    }
                }
            }
        }
    }

    /// The partial download of `hash`, opened without following a symlink (a planted one is
    /// removed), locked against another process downloading it, and the bytes it already holds.
    pub fn partial(&self, hash: &Hash) -> Result<(std::fs::File, PathBuf), String> {
        let blobs = self.made(Path::new("blobs"))?;
        let p = blobs.join(format!("{}.incomplete", hash.hex()));
        if p.symlink_metadata().is_ok_and(|m| !m.file_type().is_file()) {
            std::fs::remove_file(&p).map_err(|e| io("remove", &p, e))?;
        }
        let mut o = std::fs::OpenOptions::new();
        o.create(true).read(true).write(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(libc::O_NOFOLLOW);
        }
        let f = o.open(&p).map_err(|e| io("write", &p, e))?;
        f.lock().map_err(|e| io("lock", &p, e))?;
        Ok((f, p))
    }

    /// The blob of `hash`, if the cache holds it (`check`: with that hash; one without it is
    /// removed, to be fetched again).
    pub fn blob(&self, hash: &Hash, check: bool) -> Option<PathBuf> {
        let p = self.folder.join("blobs").join(hash.hex());
        if !self.inside(&p) {
            return None;
        }
        if check && !has_hash(&p, hash) {
            let _ = std::fs::remove_file(&p);
            return None;
        }
        Some(p)
    }

    /// A checked partial download made the blob of `hash`.
    pub fn finish(&self, partial: &Path, hash: &Hash) -> Result<PathBuf, String> {
        let blob = self.made(Path::new("blobs"))?.join(hash.hex());
        std::fs::rename(partial, &blob).map_err(|e| io("write", &blob, e))?;
        Ok(blob)
    }

    /// The snapshot entry of `file` at `commit`: a relative symlink to the blob, as Python makes
    /// it (a copy where there are no symlinks).
    pub fn link(&self, commit: &str, file: &str, hash: &Hash) -> Result<PathBuf, String> {
        if !safe::commit(commit) || !safe::repo_path(file) {
            return Err(format!("{file} at {commit} cannot be a snapshot entry"));
        }
        let rel = Path::new("snapshots").join(commit).join(file);
        let parent = self.made(rel.parent().expect("a file in a folder"))?;
        let name = rel.file_name().expect("a file name");
        let link = parent.join(name);
        if let Ok(m) = link.symlink_metadata() {
            if m.is_dir() {
                return Err(io("link", &link, "a folder is in the way"));
            }
            std::fs::remove_file(&link).map_err(|e| io("replace", &link, e))?;
        }
        point(&self.folder.join("blobs").join(hash.hex()), &link, file)
            .map_err(|e| io("link", &link, e))?;
        Ok(self.folder.join(rel))
    }
}

/// Does the file at `p` have `hash`?
pub fn has_hash(p: &Path, hash: &Hash) -> bool {
    let Ok(mut f) = std::fs::File::open(p) else {
        return false;
    };
    let Ok(len) = f.metadata().map(|m| m.len()) else {
        return false;
    };
    let mut h = hash.hasher(len);
    if hash_into(&mut f, &mut h).is_err() {
        return false;
    }
    h.matches(hash)
}

/// Feed the rest of `f` to `h`.
pub fn hash_into(f: &mut std::fs::File, h: &mut safe::Hasher) -> std::io::Result<u64> {
    f.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            return Ok(n);
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
}

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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const C: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_planted_symlink_leads_nowhere() {
        let cache = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let repo = Repo::new(cache.path(), "o/n");
        std::fs::create_dir_all(repo.folder.join("snapshots")).unwrap();
        // snapshots/C -> outside: made folders must stay inside.
        std::os::unix::fs::symlink(outside.path(), repo.folder.join("snapshots").join(C)).unwrap();
        let hash = Hash::Sha256("a".repeat(64));
        assert!(repo.link(C, "sub/x.json", &hash).is_err());
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        // A partial download planted as a symlink is replaced, its target untouched.
        let target = outside.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        std::fs::create_dir_all(repo.folder.join("blobs")).unwrap();
        std::os::unix::fs::symlink(
            &target,
            repo.folder
                .join("blobs")
                .join(format!("{}.incomplete", hash.hex())),
        )
        .unwrap();
        let (mut f, _) = repo.partial(&hash).unwrap();
        f.write_all(b"server bytes").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        // refs/main holding a path is no commit; a walk does not follow `a -> .`.
        std::fs::create_dir_all(repo.folder.join("refs")).unwrap();
        std::fs::write(repo.folder.join("refs/main"), "/etc").unwrap();
        assert_eq!(repo.reference("main"), None);
        let other = "1".repeat(40);
        let snap = repo.folder.join("snapshots").join(&other);
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::write(snap.join("config.json"), "{}").unwrap();
        std::os::unix::fs::symlink(".", snap.join("a")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", snap.join("h")).unwrap();
        assert_eq!(repo.list(&other), vec!["config.json".to_string()]);
    }
}
