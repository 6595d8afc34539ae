//! Which test resources this machine has, as cfgs for the tests (see tests/support/resources.rs).

include!("tests/support/resources.rs");

fn main() {
    resources();
    // A position-independent executable relocates about a megabyte of vtables and other
    // pointers at every start, dirtying those pages and reading 1.1 MB of relocations; linked at
    // a fixed address the linker writes them once, and a run touches only the pages it uses.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
