//! The English texts.

use super::Text;

pub const TEXT: Text = Text {
    report_header: [
        "row",
        "transaction_id",
        "account_id",
        "beneficiary",
        "amount",
        "currency",
        "state",
        "provider_code",
        "provider_message",
        "attempts",
        "initiated_at",
        "executed_at",
    ],
    summary_header: ["currency", "state", "count", "total"],
};
