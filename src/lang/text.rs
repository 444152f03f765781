//! The texts of one language, as one struct: adding a text is a field
//! here and a line in `en` and in `fr`, and the compiler names a language
//! that misses it.

/// Every human-facing text payrun writes, in one language.
#[derive(Debug)]
pub struct Text {
    /// The report's header. The English names are the fixed machine names
    /// reconciliation scripts key on.
    pub report_header: [&'static str; 12],
    /// The report summary's header (currency, state, count, total).
    pub summary_header: [&'static str; 4],
}
