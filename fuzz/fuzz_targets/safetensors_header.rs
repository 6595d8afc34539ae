#![no_main]
//! Any bytes as a safetensors file: the checked header reader returns tensors and the problems of
//! where their bytes lie, or an error; never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = anatomy_checkpoint::safetensors::parse(data, "fuzz.safetensors");
});
