//! Les textes français.

use super::Text;

pub const TEXT: Text = Text {
    report_header: [
        "ligne",
        "id_transaction",
        "compte",
        "bénéficiaire",
        "montant",
        "devise",
        "état",
        "code_fournisseur",
        "message_fournisseur",
        "tentatives",
        "initié_le",
        "exécuté_le",
    ],
    summary_header: ["devise", "état", "nombre", "total"],
};
