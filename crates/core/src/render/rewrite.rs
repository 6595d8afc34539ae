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

/// Every occurrence of `old` replaced by `new`, as `str::replace` does (left to right, the new
/// text not searched again), in place: a template's many edits then move its tail rather than
/// copy the whole file once each. Returns how many it replaced.
pub(crate) fn replace_all(out: &mut String, old: &str, new: &str) -> usize {
    if old.is_empty() {
        let n = out.chars().count() + 1;
        *out = out.replace(old, new);
        return n;
    }
    let finder = memchr::memmem::Finder::new(old);
    let (mut from, mut n) = (0, 0);
    while let Some(i) = finder.find(&out.as_bytes()[from..]) {
        let at = from + i;
        out.replace_range(at..at + old.len(), new);
        from = at + new.len();
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// `replace_all` is `str::replace`, overlapping and self-similar patterns included.
        #[test]
        fn replace_all_is_str_replace(text in "[ab\\n]{0,40}", old in "[ab\\n]{0,3}", new in "[ab]{0,4}") {
            let mut out = text.clone();
            let n = super::replace_all(&mut out, &old, &new);
            prop_assert_eq!(out, text.replace(&old, &new));
            if !old.is_empty() {
                prop_assert_eq!(n, text.matches(old.as_str()).count());
            }
        }
    }
}
