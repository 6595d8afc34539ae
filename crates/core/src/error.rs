//! Errors a user can act on: each names the file, the field and what would be valid.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file (or catalog entry) the problem is in.
    pub file: String,
    /// The field at fault, as a JSON path (`text_config.hidden_size`); empty when the file as a whole is at fault.
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl Error {
    pub fn new(
        file: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            file: file.into(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// An error about the file as a whole (unreadable, not JSON, unknown name).
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(file, "", message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: field `{}`: {}", self.file, self.field, self.message)
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
