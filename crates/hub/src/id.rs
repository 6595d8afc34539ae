//! Hub ids as the command line takes them: `owner/name`, then optionally `/path/of/a/file` in
//! the repo (a GGUF repo holds several), then optionally `@revision` (branch, tag or commit).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Id {
    /// `owner/name`.
    pub repo: String,
    pub file: Option<String>,
    pub revision: Option<String>,
}

impl Id {
    /// The revision to ask for: the one given, else the default branch.
    pub fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or("main")
    }
}

/// A repo owner or name as the Hub allows them: letters, digits, `-`, `_`, `.`, not starting
/// with `.` or `-`, at most 96 characters.
fn segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 96
        && !s.starts_with(['.', '-'])
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `arg` as a Hub id, or None when it cannot be one (callers try local paths first).
pub fn parse(arg: &str) -> Option<Id> {
    let (rest, revision) = match arg.rsplit_once('@') {
        Some((r, v)) => (r, Some(v)),
        None => (arg, None),
    };
    if let Some(v) = revision {
        let ok = !v.is_empty()
            && v.len() <= 256
            && !v.split('/').any(|p| p.is_empty() || p == "." || p == "..")
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        if !ok {
            return None;
        }
    }
    let mut parts = rest.splitn(3, '/');
    let (owner, name) = (parts.next()?, parts.next()?);
    if !segment(owner) || !segment(name) {
        return None;
    }
    let file = parts.next();
    if let Some(f) = file {
        if f.split('/').any(|p| p.is_empty() || p == "." || p == "..")
            || f.chars().any(|c| c.is_control() || c == '\\')
        {
            return None;
        }
    }
    Some(Id {
        repo: format!("{owner}/{name}"),
        file: file.map(String::from),
        revision: revision.map(String::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_repo_file_and_revision() {
        let id = parse("Qwen/Qwen3-8B").unwrap();
        assert_eq!(
            (id.repo.as_str(), id.file, id.revision),
            ("Qwen/Qwen3-8B", None, None)
        );
        let id = parse("bartowski/X-GGUF/sub/X-Q4_K_M.gguf@v1.0").unwrap();
        assert_eq!(id.repo, "bartowski/X-GGUF");
        assert_eq!(id.file.as_deref(), Some("sub/X-Q4_K_M.gguf"));
        assert_eq!(id.revision.as_deref(), Some("v1.0"));
        assert_eq!(
            parse("a/b@refs/pr/1").unwrap().revision.as_deref(),
            Some("refs/pr/1")
        );
    }

    #[test]
    fn refuses_what_cannot_be_an_id() {
        for bad in [
            "llama-3.1-8b",
            "./x/y",
            "../a/b",
            "/abs/path",
            "a/",
            "/b",
            "a/b@",
            "a/b@x/../y",
            "a/b/../c",
            "a/b/c//d",
            "a b/c",
            "a/b@x y",
            ".a/b",
            "a/-b",
            "a\\b/c",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
