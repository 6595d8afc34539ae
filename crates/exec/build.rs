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
    // As `qlinear::Path::detect` chooses them.
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
    {
        println!("cargo::rustc-cfg=cpu_avx2");
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
        {
            println!("cargo::rustc-cfg=cpu_avx512");
        }
    }
}
