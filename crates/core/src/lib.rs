//! anatomy-core: from a model definition to an exact architecture graph and its views.
//!
//! `source` → [`spec::Spec`] → [`graph::Graph`] → (`stats`, `manifest`, `render`).

pub mod catalog;
pub mod config;
#[doc(hidden)]
pub mod corpus;
pub mod diff;
pub mod error;
pub mod families;
pub mod fmt;
pub mod graph;
pub mod layers;
pub mod manifest;
pub mod mechanisms;
pub mod naming;
pub mod ngram;
pub mod output;
pub mod plan;
pub mod quant;
pub mod render;
pub mod source;
pub mod spec;
pub mod stats;
pub mod values;

pub use error::{Error, Result};
