//! Number formatting shared by the views.

/// `s` as text inside a Python `"""` string (a docstring): backslashes doubled (so `\x` or
/// `\N{…}` cannot make an invalid escape), double quotes as single (no `"""` can end it early),
/// control characters as their escape written out.
pub fn py_doc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push('\''),
            c if c.is_control() => out.push_str(&format!("\\\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `s` as Markdown text that renders as itself: every ASCII punctuation character
/// backslash-escaped (CommonMark allows it for each), so no link, image, emphasis, code span or
/// HTML can be made of it, nor a table cell broken; line breaks as spaces.
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            // `<` and `&` as entities: an escaped `<` is text, but some renderers pass HTML.
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` with control characters (ESC, newlines, …) written as escapes, so a string from an input
/// file cannot drive the terminal it is printed on.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `n` and a noun, the noun plural unless `n` is 1: "1 tensor", "2 tensors", "1,024 layers".
pub fn count(n: u128, noun: &str) -> String {
    format!("{} {noun}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// `3212749824` → `3,212,749,824`.
pub fn grouped(n: u128) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `3212749824` → `3.21B`; `134515008` → `135M`.
pub fn short(n: u128) -> String {
    let f = n as f64;
    let (v, unit) = if f >= 1e12 {
        (f / 1e12, "T")
    } else if f >= 1e9 {
        (f / 1e9, "B")
    } else if f >= 1e6 {
        (f / 1e6, "M")
    } else if f >= 1e3 {
        (f / 1e3, "K")
    } else {
        return n.to_string();
    };
    if v >= 100.0 {
        format!("{v:.0}{unit}")
    } else if v >= 10.0 {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.2}{unit}")
    }
}

/// A float as written in a config: integers without a decimal point.
/// `x` to 4 significant digits, marked ≈ where that rounds it: `≈2.825`, `0.5`.
pub fn approx(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return float(x);
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s.parse::<f64>() == Ok(x) {
        s
    } else {
        format!("≈{s}")
    }
}

pub fn float(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Bytes with binary units: `1.50 GiB`.
pub fn bytes(n: u128) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", units[i])
    }
}

/// Context lengths as people say them: 131072 → `128K`.
pub fn context(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}K", n / 1024)
    } else {
        n.to_string()
    }
}

/// A count of floating-point operations in TFLOP, GFLOP or MFLOP, the largest that keeps it ≥ 1
/// (plain FLOP below a million).
pub fn flops(x: f64) -> String {
    if x >= 1e12 {
        format!("{:.2} TFLOP", x / 1e12)
    } else if x >= 1e9 {
        format!("{:.2} GFLOP", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} MFLOP", x / 1e6)
    } else {
        format!("{x:.0} FLOP")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(grouped(3212749824), "3,212,749,824");
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(100), "100");
        assert_eq!(short(3212749824), "3.21B");
        assert_eq!(short(134515008), "135M");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(context(131072), "128K");
        assert_eq!(context(10485760), "10M");
    }
}
