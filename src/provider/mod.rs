//! The provider's HTTP client.

pub mod wire;
