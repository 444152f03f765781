//! Rate limiting of provider calls.
pub mod aimd;
#[cfg(test)]
mod sim;
