#![no_main]
//! Any bytes as a GGUF file: the checked header reader, the config made from its metadata and the
//! Spec and graph from that return a model or an error, never panic, and allocate only what the
//! input's size justifies.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::Cursor::new(data);
    if let Ok(c) = anatomy_checkpoint::gguf::read(&mut r, data.len() as u64, "fuzz.gguf") {
        let _ = c.data_is_sound();
        if let Ok(spec) = anatomy_checkpoint::spec(&c, false) {
            if let Ok(g) = anatomy_core::graph::build(&spec) {
                let _ = anatomy_core::stats::stats(&g, None);
                let _ = anatomy_checkpoint::verify::verify(&g, &c);
            }
        }
    }
});
