//! Views of a Graph. The terminal walkthrough lives here; the web page and op view come later.

pub mod boxes;
pub mod export;
mod fragment;
pub mod html;
pub mod line;
pub mod numpy;
pub mod plan;
pub mod report;
mod rewrite;
pub mod terminal;
pub mod torch;

pub use terminal::{render, Options};
