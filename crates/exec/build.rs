//! Which test resources this machine has, as cfgs for the tests (see tests/support/resources.rs),
//! and which of the kernels' SIMD paths its CPU runs: the tests of a path it lacks are ignored
//! with the reason, so that a machine that cannot check one says so.

include!("../../tests/support/resources.rs");

fn main() {
    resources();
    cpu();
}

fn cpu() {
    for cfg in ["cpu_avx2", "cpu_avx512"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    #[cfg(target_arch = "x86_64")]
    {
        let has = |f: &[&str]| {
            f.iter().all(|f| match *f {
                "avx2" => is_x86_feature_detected!("avx2"),
                "fma" => is_x86_feature_detected!("fma"),
                "f16c" => is_x86_feature_detected!("f16c"),
                "avx512f" => is_x86_feature_detected!("avx512f"),
                "avx512bw" => is_x86_feature_detected!("avx512bw"),
                "avx512vnni" => is_x86_feature_detected!("avx512vnni"),
                _ => false,
            })
        };
        // As `qlinear::Path::detect` chooses them.
        if has(&["avx2", "fma", "f16c"]) {
            println!("cargo::rustc-cfg=cpu_avx2");
            if has(&["avx512f", "avx512bw", "avx512vnni"]) {
                println!("cargo::rustc-cfg=cpu_avx512");
            }
        }
    }
}
