//! Edits of a generated file's text, for the views written over another model's file (a draft
//! model's NumPy file and PyTorch module over its layers'): each edit finds what it rewrites, or
//! the template changed under it and the file would be wrong.

/// `old` replaced by `new`: its first occurrence, or all of them.
pub(crate) fn swap(out: &mut String, old: &str, new: &str, all: bool) {
    assert!(out.contains(old), "the rewrite finds `{old}`");
    *out = if all {
        out.replace(old, new)
    } else {
        out.replacen(old, new, 1)
    };
}

/// The top-level block that starts with `head` (up to the two blank lines after it) replaced
/// by `with`.
pub(crate) fn replace_block(out: &mut String, head: &str, with: &str) {
    let start = out.find(head).expect("the block to replace");
    let end = out[start..].find("\n\n\n").map_or(out.len(), |e| start + e);
    out.replace_range(start..end, with);
}
