#![no_main]
//! Any bytes as a Hub server's answer: a status, headers and a body, through the checks anatomy's
//! Hub client applies to every answer (`anatomy_hub::check_answer`): never a panic, and every
//! hash, commit and file name it accepts is one that names nothing outside the cache.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Layout: 2 bytes status, 8 bytes the range asked (start u32, length u32), then header lines
    // `name: value` up to an empty line, then the body.
    if data.len() < 10 {
        return;
    }
    let status = u16::from_le_bytes([data[0], data[1]]);
    let start = u32::from_le_bytes(data[2..6].try_into().unwrap()) as u64;
    let len = u32::from_le_bytes(data[6..10].try_into().unwrap()) as u64;
    let rest = &data[10..];
    let split = rest.windows(2).position(|w| w == b"\n\n").unwrap_or(rest.len());
    let (head, body) = (&rest[..split], rest.get(split + 2..).unwrap_or(&[]));
    let lines: Vec<(String, &[u8])> = head
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let at = l.iter().position(|&b| b == b':')?;
            let name = std::str::from_utf8(&l[..at]).ok()?.trim().to_string();
            let value = l[at + 1..].strip_prefix(b" ").unwrap_or(&l[at + 1..]);
            Some((name, value))
        })
        .collect();
    let headers: Vec<(&str, &[u8])> = lines.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    anatomy_hub::check_answer(status, &headers, body, start..start + len);
});
