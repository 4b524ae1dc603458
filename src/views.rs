//! One module per tab.

pub mod data;
pub mod document;
pub mod report;
pub mod targets;
