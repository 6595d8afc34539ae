#![no_main]
//! Any bytes as a GGUF file: the header reader and the Spec made from its metadata return a model
//! or an error, never panic, and allocate only what the input's size justifies.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = anatomy_checkpoint::gguf::read(&mut std::io::Cursor::new(data), "fuzz.gguf") {
        if let Ok(spec) = anatomy_checkpoint::spec(&c) {
            let _ = anatomy_core::graph::build(&spec);
        }
    }
});
