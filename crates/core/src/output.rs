//! Writing generated files: atomically (a temporary file in the same folder, then a rename), and
//! never over a file anatomy did not write unless forced.

use crate::error::{Error, Result};
use crate::render::html::GENERATOR;
use std::io::{Read, Write};
use std::path::Path;

/// Is the file at `path` one of ours (absent counts as ours)?
fn ours(path: &Path) -> Result<bool> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => {
            return Err(Error::file(
                path.display().to_string(),
                format!("cannot read: {e}"),
            ))
        }
    };
    let mut head = vec![0u8; 4096];
    let n = f
        .read(&mut head)
        .map_err(|e| Error::file(path.display().to_string(), format!("cannot read: {e}")))?;
    Ok(String::from_utf8_lossy(&head[..n]).contains(GENERATOR))
}

/// Write `contents` to `path`, replacing it only if anatomy wrote it or `force` is set.
pub fn write(path: &Path, contents: &str, force: bool) -> Result<()> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(Error::file(
            &shown,
            "is a folder; give a file name such as page.html",
        ));
    }
    if !force && !ours(path)? {
        return Err(Error::file(
            &shown,
            "exists and was not written by anatomy; pass --force to overwrite it",
        ));
    }
    write_atomic(path, contents.as_bytes())
}

/// Write `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a file and a failure leaves none behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let shown = path.display().to_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".anatomy-")
        .tempfile_in(dir)
        .map_err(|e| {
            Error::file(
                &shown,
                format!("cannot create a file in {}: {e}", dir.display()),
            )
        })?;
    tmp.write_all(bytes)
        .map_err(|e| Error::file(&shown, format!("cannot write: {e}")))?;
    // Temporary files are private; a page is for reading.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| Error::file(&shown, format!("cannot write: {}", e.error)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_files_and_replaces_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("page.html");
        std::fs::write(&p, "my notes").unwrap();
        let e = write(&p, "new", false).unwrap_err();
        assert!(e.message.contains("not written by anatomy"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "my notes");
        write(&p, &format!("{GENERATOR} one"), true).unwrap();
        write(&p, &format!("{GENERATOR} two"), false).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("two"));
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
