//! Which test resources this machine has, as cfgs for the tests (see tests/support/resources.rs).

include!("tests/support/resources.rs");

fn main() {
    resources();
}
