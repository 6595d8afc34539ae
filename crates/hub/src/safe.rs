//! What a server says, checked before it names a file or a request: commits, ETags (content
//! hashes, which name the cache's blobs) and repo file paths. Everything here is a pure function
//! of its input, so the fuzz target reaches all of it.

use sha1::Digest;

/// A commit as the Hub writes it: 40 hexadecimal digits.
pub fn commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The content hash an ETag names, which is also the blob's file name in the cache: a git blob
/// SHA-1 (40 hex digits: a file stored in git) or a SHA-256 (64: a file stored in LFS). Anything
/// else is refused, so no ETag can name a path, and every download can be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hash {
    GitSha1(String),
    Sha256(String),
}

impl Hash {
    /// An ETag header's value (`W/"…"` or `"…"` or bare) as a hash.
    pub fn from_etag(raw: &str) -> Option<Hash> {
        let s = raw.trim();
        let s = s.strip_prefix("W/").unwrap_or(s);
        let s = s
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s);
        if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let s = s.to_ascii_lowercase();
        match s.len() {
            40 => Some(Hash::GitSha1(s)),
            64 => Some(Hash::Sha256(s)),
            _ => None,
        }
    }

    /// The blob's file name: the hash's hex digits.
    pub fn hex(&self) -> &str {
        match self {
            Hash::GitSha1(h) | Hash::Sha256(h) => h,
        }
    }

    /// A hasher for a file of `size` bytes (git hashes a header before the content).
    pub fn hasher(&self, size: u64) -> Hasher {
        match self {
            Hash::GitSha1(_) => {
                let mut h = sha1::Sha1::new();
                h.update(format!("blob {size}\0").as_bytes());
                Hasher::GitSha1(h)
            }
            Hash::Sha256(_) => Hasher::Sha256(sha2::Sha256::new()),
        }
    }
}

pub enum Hasher {
    GitSha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Hasher {
    pub fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::GitSha1(h) => h.update(bytes),
            Hasher::Sha256(h) => h.update(bytes),
        }
    }

    /// Does the content hashed so far have `hash`?
    pub fn matches(self, hash: &Hash) -> bool {
        let got = match self {
            Hasher::GitSha1(h) => hex(&h.finalize()),
            Hasher::Sha256(h) => hex(&h.finalize()),
        };
        got == hash.hex()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The longest repo file path accepted, and the longest segment (a file name's usual limit).
const MAX_PATH: usize = 1024;
const MAX_SEGMENT: usize = 255;

/// A file path in a repo, as a server lists it or a shard index names it: relative, `/`-separated,
/// with no empty, `.` or `..` segment, no backslash, no control character, and of bounded length,
/// so that joined to a snapshot folder it stays inside it.
pub fn repo_path(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_PATH
        && !s.starts_with('/')
        && !s.chars().any(|c| c.is_control() || c == '\\')
        && s.split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && p.len() <= MAX_SEGMENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_etag_is_a_hash_or_nothing() {
        let sha = "a".repeat(64);
        assert_eq!(
            Hash::from_etag(&format!("\"{sha}\"")),
            Some(Hash::Sha256(sha.clone()))
        );
        assert_eq!(
            Hash::from_etag(&format!("W/\"{}\"", "AB".repeat(20))),
            Some(Hash::GitSha1("ab".repeat(20)))
        );
        for bad in [
            "\"/home/u/.bashrc\"",
            "../../x",
            "\"\"",
            "abc",
            &"a".repeat(63),
            &format!("{}/", "a".repeat(39)),
            &"g".repeat(40),
        ] {
            assert_eq!(Hash::from_etag(bad), None, "{bad}");
        }
    }

    #[test]
    fn hashes_are_checked_as_the_hub_computes_them() {
        // `git hash-object` of "hello\n", and the SHA-256 of the same bytes.
        let git = Hash::GitSha1("ce013625030ba8dba906f756967f9e9ca394464a".into());
        let mut h = git.hasher(6);
        h.update(b"hello\n");
        assert!(h.matches(&git));
        let sha =
            Hash::Sha256("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03".into());
        let mut h = sha.hasher(6);
        h.update(b"hello\n");
        assert!(h.matches(&sha));
        let mut h = sha.hasher(6);
        h.update(b"hellO\n");
        assert!(!h.matches(&sha));
    }

    #[test]
    fn a_repo_path_stays_in_its_folder() {
        for ok in ["config.json", "sub/dir/x.gguf", "a..b", ".gitattributes"] {
            assert!(repo_path(ok), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "./a",
            "a/.",
            "a\\b",
            "a\nb",
            "a\0b",
            &"x".repeat(256),
            &"a/".repeat(600),
        ] {
            assert!(!repo_path(bad), "{bad:?}");
        }
        assert!(commit(&"0a".repeat(20)));
        assert!(!commit("/etc"));
        assert!(!commit(&"0".repeat(41)));
    }
}
