#![no_main]
//! Any text as a config.json: the loaders, the graph, its figures and every view either work or
//! return an error; never a panic, never unbounded allocation.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for lenient in [false, true] {
        if let Ok(spec) = anatomy_core::families::load_json("fuzz.json", text, "fuzz", lenient) {
            if let Ok(g) = anatomy_core::graph::build(&spec) {
                let _ = anatomy_core::stats::stats(&g, None);
                let _ = anatomy_core::manifest::manifest(&g, anatomy_core::manifest::Naming::Gguf);
                let _ = anatomy_core::render::render(
                    &g,
                    &anatomy_core::render::Options { width: 80, color: false, step: Some(3) },
                );
                let _ = anatomy_core::render::numpy::module(&g.spec, "model.py");
                let _ = anatomy_core::render::torch::module(&g.spec);
            }
        }
    }
});
