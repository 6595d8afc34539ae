//! Which pieces of the NumPy fragments a model's file holds: one line per piece, on where the
//! Spec has what it computes.

use crate::render::fragment::Pieces;
use crate::spec::Spec;

pub(super) fn pieces(spec: &Spec) -> Pieces {
    let mut p = Pieces::default();
    // Dory's nGPT: learned scales on queries, gates, the MLP's halves and the logits.
    p.set("ngpt", spec.ngpt.is_some());
    p
}
