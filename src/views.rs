//! One module per tab.

pub mod compare;
pub mod data;
pub mod document;
pub mod production;
pub mod report;
pub mod sweep;
pub mod targets;
