#![no_main]
//! Any bytes as a safetensors file: the header reader returns tensors or an error, never panics.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = anatomy_checkpoint::safetensors::parse(data, "fuzz.safetensors");
});
