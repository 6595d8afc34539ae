#![no_main]
//! Any bytes as a GGUF file: the checked header reader and the config made from its metadata
//! return a model or an error, never panic, and allocate only what the input's size justifies.
//! (The loaders and views behind the config are the config_json target's.)
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::Cursor::new(data);
    if let Ok(c) = anatomy_checkpoint::gguf::read(&mut r, data.len() as u64, "fuzz.gguf") {
        let _ = c.data_is_sound();
        let _ = anatomy_checkpoint::spec(&c, false);
    }
});
