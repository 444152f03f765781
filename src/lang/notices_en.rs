//! What `validate` and `run` say about a file as a whole, in English: the
//! notices on how it was read, the refusals of a file that cannot be
//! validated, the header's missing columns and the summary's lines. The
//! JSON output and the logs carry these sentences.

use crate::input::{InputError, InputNotice};
use crate::validate::columns::{Col, ColumnsError, Found};
use crate::validate::notice::{Line, Notice, Refusal, SkippedBy};

/// `s` when `n` is not one.
fn plural(n: impl Into<u64>) -> &'static str {
    if n.into() == 1 { "" } else { "s" }
}

pub(super) fn listed(list: &[String], more: usize) -> String {
    let mut list = list.to_vec();
    if more > 0 {
        list.push(format!("and {more} more"));
    }
    list.join(", ")
}

pub(super) fn input_notice(n: &InputNotice) -> String {
    match n {
        InputNotice::Windows1252 => {
            "read as Windows-1252 (the file is not valid UTF-8; set encoding in the config to choose)"
                .into()
        }
        InputNotice::GuardUndone { last_column, cells } => format!(
            "read as a file payrun wrote (its last column is `{last_column}`): {cells} cell(s) guarded against spreadsheet formulas with a leading ' were read without it"
        ),
        InputNotice::FirstVisibleSheet { sheet, hidden } => format!(
            "read worksheet {sheet:?}, the first visible one (hidden before it: {}); choose another with --sheet",
            hidden
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        InputNotice::Preamble {
            first,
            last,
            header_row,
            said,
            more,
        } => {
            let (rows, were) = if first == last {
                (format!("row {first}"), "was")
            } else {
                (format!("rows {first} to {last}"), "were")
            };
            format!(
                "{rows} before the header row (row {header_row}) {were} skipped, not read as data: {}{}",
                said.join(", "),
                if *more { ", …" } else { "" }
            )
        }
    }
}

pub(super) fn notice(n: &Notice) -> String {
    match n {
        Notice::Input(n) => input_notice(n),
        Notice::HiddenNotLookedFor { ext } => format!(
            "hidden or filtered rows were not looked for: a .{ext} workbook does not show them to payrun (--assume-no-hidden-rows); save it as .xlsx to have them checked"
        ),
        Notice::HiddenLeftOut { count } => format!(
            "{count} row{} hidden or filtered out in the spreadsheet left out (--skip-hidden-rows), listed with the skipped rows",
            plural(*count as u64)
        ),
        Notice::PayeesCapped { max } => {
            format!("repeated payees were looked for in the first {max} valid rows only")
        }
        Notice::TotalsRowUsed {
            row,
            total,
            currency,
        } => format!(
            "row {row} is a totals row ({total} {currency}), equal to the sum of the rows above: used as a control total, not paid"
        ),
        Notice::NumberColumn {
            header,
            count,
            first,
            phone,
        } => {
            let rows = if *count == 1 {
                format!("row {first}")
            } else {
                format!("{count} rows, the first row {first}")
            };
            let read = if *phone {
                " (phone numbers in number cells are read as +digits)"
            } else {
                ""
            };
            format!(
                "column {header:?} holds numbers, not text ({rows}){read}: leading zeros would have been lost and payrun cannot tell; check these identifiers, and format the column as Text"
            )
        }
    }
}

pub(super) fn cannot_validate(path: &str) -> String {
    format!("cannot validate {path}")
}

pub(super) fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::HiddenUnknown { path, ext } => format!(
            "{path}: payrun cannot tell which rows of a .{ext} workbook are hidden or filtered out, so it would pay rows nobody sees: save the workbook as .xlsx (or .ods) and give that file, or, after checking in the spreadsheet program that no row is hidden or filtered, pass --assume-no-hidden-rows"
        ),
        Refusal::HiddenRows { path, count, named } => {
            let one = *count == 1;
            let more = if *count > named.len() {
                format!(" and {} more", count - named.len())
            } else {
                String::new()
            };
            format!(
                "{path}: {count} row{} hidden or filtered out in the spreadsheet, so nobody sees {}: row{} {}{more}; unhide them, delete them, or pass --skip-hidden-rows to leave them out",
                if one { " is" } else { "s are" },
                if one { "it" } else { "them" },
                if one { "" } else { "s" },
                named
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        }
        Refusal::Columns {
            path,
            error,
            sheets,
        } => {
            let mut said = format!("{}: {}", cannot_validate(path), columns_error(error));
            if !sheets.is_empty() {
                said.push_str(&format!(
                    ". This workbook's worksheets are {}: if the payroll is on another one, choose it with --sheet NAME",
                    sheets.join(", ")
                ));
            }
            said
        }
        Refusal::NoDataRows { path } => format!(
            "{path} has a header row but no data rows: add one row per payout below the header"
        ),
        Refusal::SkipColumn { column } => format!(
            "the config's [skip] rule names the column {column}, which is not a header of the file: write the header as it appears in the file's first row"
        ),
        Refusal::SkipNoValues => "the config's [skip] rule has no values: list the values that mark a row as not to be paid, e.g. values = [\"annulé\", \"non\"]".into(),
    }
}

pub(super) fn columns_error(e: &ColumnsError) -> String {
    match e {
        ColumnsError::NotAColumn { from, to } => format!(
            "[columns] maps {from:?} to {to:?}, which is not a payrun column; the columns are: {}",
            Col::ALL.map(Col::name).join(", ")
        ),
        ColumnsError::Twice {
            column,
            first,
            first_at,
            second,
            second_at,
        } => format!(
            "two columns are read as `{column}`: {first} (column {first_at}) and {second} (column {second_at}); rename or remove one of them, or map one in the config's [columns] table"
        ),
        ColumnsError::Missing {
            missing,
            found,
            defaults,
            to_map,
        } => {
            let found = match found {
                Found::EmptyRow => "the row is empty".to_owned(),
                Found::AllRead => "every header of the file is already read".to_owned(),
                Found::NotRead { shown, more } => {
                    format!("headers not read: {}", listed(shown, *more))
                }
            };
            let extra = if defaults.is_empty() {
                String::new()
            } else {
                format!(" (or set {} in the config)", defaults.join(" and "))
            };
            let first = missing.first().copied().unwrap_or_default();
            let fix = match to_map {
                Some(h) => format!(
                    "Rename the header in the file, or map it in the [columns] table of the config file (payrun.toml in the folder you run payrun from, or the file given with --config), e.g. {h:?} = \"{first}\""
                ),
                None => format!("Add a {first} column to the file"),
            };
            format!(
                "missing required column{} {}{extra}; {found}. {fix}",
                plural(missing.len() as u64),
                missing.join(", "),
            )
        }
    }
}

pub(super) fn line(l: &Line<'_>) -> String {
    match l {
        Line::Note(n) => format!("Note: {}", notice(n)),
        Line::NotRead(headers) => {
            let (list, more) = crate::validate::columns::shown(headers);
            format!("Columns not read: {}", listed(&list, more))
        }
        Line::Skipped {
            by,
            count,
            rows,
            more,
        } => format!(
            "Skipped by {}, not paid: {count} row{} (row{} {}{})",
            match by {
                SkippedBy::Rule => "the config's [skip] rule",
                SkippedBy::Hidden => "--skip-hidden-rows (hidden or filtered rows)",
                SkippedBy::Both =>
                    "the config's [skip] rule and --skip-hidden-rows (hidden or filtered rows)",
            },
            plural(*count),
            plural(rows.len() as u64),
            rows.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            if *more { ", ..." } else { "" }
        ),
        Line::Repeated { pairs, more } => format!(
            "Same account, amount and currency as an earlier row (pasted twice?): {}{}",
            pairs
                .iter()
                .map(|[r, first]| format!("row {r} repeats row {first}"))
                .collect::<Vec<_>>()
                .join(", "),
            if *more { ", ..." } else { "" }
        ),
    }
}

/// Names as listed in a message: `"Paie", "Primes"`.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn input_error(e: &InputError) -> String {
    match e {
        InputError::EmptyFile { path } => format!(
            "{path} is empty: expected a header row naming the columns, then one row per payout"
        ),
        InputError::EmptySheet { path, sheet } => format!(
            "worksheet {sheet:?} of {path} is empty: expected a header row naming the columns, then one row per payout"
        ),
        InputError::NoSuchSheet {
            path,
            wanted,
            sheets,
        } => format!(
            "{path} has no worksheet named {wanted:?}; its worksheets are: {}",
            quoted(sheets)
        ),
        InputError::SheetOfCsv { path, sheet } => format!(
            "--sheet {sheet:?} applies only to spreadsheet workbooks (.xlsx, .xls, .ods), and {path} is read as CSV"
        ),
        InputError::WorkbookAsCsv { path } => format!(
            "{path} is a spreadsheet workbook, not CSV: give it its real extension (.xlsx, .xls or .ods) so it is read as a workbook"
        ),
        InputError::NulBytes { path } => format!(
            "{path} contains NUL bytes, so it is not a text CSV file (UTF-16 or a binary file?): save it as \"CSV UTF-8\""
        ),
        InputError::UnclosedQuote { line } => format!(
            "line {line}: a double quote (\") opened there is never closed, so every line after it would be read as one cell: close the quote, or remove it (a value containing a quote must be written inside quotes with the quote doubled: \"5\"\" screen\")"
        ),
        InputError::NotUtf8 {
            line,
            row,
            field,
            byte,
            before,
        } => format!(
            "line {line} (row {row}, field {field}) is not valid UTF-8: byte 0x{byte:02X} after {before:?}. The file was probably saved in a Windows or Latin-1 encoding (Excel's plain \"CSV\" format): set encoding = \"windows-1252\" in the config, or save it again as \"CSV UTF-8\""
        ),
    }
}
