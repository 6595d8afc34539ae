#![no_main]
//! Any bytes as a model.safetensors.index.json: parsed as JSON, its shard list is a map of file
//! names that stay in the folder, or an error; never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(shards) = anatomy_checkpoint::safetensors::shards(&v, "fuzz.index.json") {
            for file in shards.keys() {
                assert!(!file.contains('/') && file != "..", "{file}");
            }
        }
    }
});
