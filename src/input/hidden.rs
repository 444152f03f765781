//! Rows hidden or filtered out of a worksheet, which `calamine` reads like
//! any other: a person looking at the sheet does not see them, so paying
//! them silently would pay what nobody checked. Read here from the
//! workbook's XML: `<row hidden="1">` in an .xlsx worksheet part, and
//! `table:visibility="collapsed"` or `"filter"` on an .ods
//! `table:table-row` (honouring `table:number-rows-repeated`). The
//! binary formats (.xls, .xlsb) are not read here (nor by `calamine`): for
//! them the answer is "unknown", which the caller refuses unless told the
//! rows were checked.

use anyhow::{Context, Result};
use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Whether the rows of a workbook with extension `ext` can be checked for
/// visibility: .xlsx, .xlsm and .ods yes; .xls and .xlsb no.
pub fn visibility_known(ext: &str) -> bool {
    matches!(ext, "xlsx" | "xlsm" | "ods")
}

/// Hidden rows (spreadsheet numbers, 1-based) of worksheet `sheet` of the
/// workbook at `path`, by its extension; empty for formats whose row
/// visibility is not known ([`visibility_known`]).
pub fn hidden_rows(path: &Path, ext: &str, sheet: &str) -> Result<BTreeSet<u64>> {
    if !visibility_known(ext) {
        return Ok(BTreeSet::new());
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let Ok(mut zip) = zip::ZipArchive::new(BufReader::new(file)) else {
        return Ok(BTreeSet::new());
    };
    match ext {
        "xlsx" | "xlsm" => {
            let Some(part) = xlsx_part(&mut zip, sheet)? else {
                return Ok(BTreeSet::new());
            };
            let Ok(entry) = zip.by_name(&part) else {
                return Ok(BTreeSet::new());
            };
            xlsx_rows(BufReader::new(entry))
        }
        "ods" => {
            let Ok(entry) = zip.by_name("content.xml") else {
                return Ok(BTreeSet::new());
            };
            ods_rows(BufReader::new(entry), sheet)
        }
        _ => Ok(BTreeSet::new()),
    }
}

/// The value of attribute `name` of `e`, unescaped.
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name)
        .and_then(|a| {
            a.normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// Reads a whole (small) zip part as text.
fn part_text<R: Read + std::io::Seek>(zip: &mut zip::ZipArchive<R>, name: &str) -> Option<String> {
    let mut text = String::new();
    zip.by_name(name).ok()?.read_to_string(&mut text).ok()?;
    Some(text)
}

/// The zip part of worksheet `sheet`: its relationship id in
/// `xl/workbook.xml`, then that id's target in the workbook's relationships.
fn xlsx_part<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    sheet: &str,
) -> Result<Option<String>> {
    let (Some(book), Some(rels)) = (
        part_text(zip, "xl/workbook.xml"),
        part_text(zip, "xl/_rels/workbook.xml.rels"),
    ) else {
        return Ok(None);
    };
    let mut id = None;
    let mut reader = quick_xml::Reader::from_str(&book);
    loop {
        match reader.read_event()? {
            Event::Start(e) | Event::Empty(e)
                if e.local_name().as_ref() == "sheet"
                    && attr(&e, "name").as_deref() == Some(sheet) =>
            {
                id = attr(&e, "r:id");
                break;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let Some(id) = id else { return Ok(None) };
    let mut reader = quick_xml::Reader::from_str(&rels);
    loop {
        match reader.read_event()? {
            Event::Start(e) | Event::Empty(e)
                if e.local_name().as_ref() == "Relationship"
                    && attr(&e, "Id").as_deref() == Some(id.as_str()) =>
            {
                let target = attr(&e, "Target").unwrap_or_default();
                return Ok(Some(match target.strip_prefix('/') {
                    Some(absolute) => absolute.to_string(),
                    None => format!("xl/{target}"),
                }));
            }
            Event::Eof => return Ok(None),
            _ => {}
        }
    }
}

/// Rows of an .xlsx worksheet part marked `hidden="1"` (or `"true"`).
fn xlsx_rows(xml: impl BufRead) -> Result<BTreeSet<u64>> {
    let mut hidden = BTreeSet::new();
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    // Rows without `r` follow the previous one.
    let mut last = 0u64;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "row" => {
                let row = attr(&e, "r")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(last + 1);
                last = row;
                if matches!(attr(&e, "hidden").as_deref(), Some("1" | "true")) {
                    hidden.insert(row);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(hidden)
}

/// Repeated hidden rows listed one by one, at most: a sheet repeats a
/// hidden empty row to its last row (about a million); rows past the data
/// are blank and never read, so they need not be listed.
const MAX_ODS_REPEAT: u64 = 10_000;

/// Rows of table `sheet` in an .ods `content.xml` that are collapsed or
/// filtered out.
fn ods_rows(xml: impl BufRead, sheet: &str) -> Result<BTreeSet<u64>> {
    let mut hidden = BTreeSet::new();
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut in_table = false;
    let mut row = 0u64;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) if e.name().as_ref() == "table:table" => {
                in_table = attr(&e, "table:name").as_deref() == Some(sheet);
            }
            Event::End(e) if e.name().as_ref() == "table:table" && in_table => break,
            Event::Start(e) | Event::Empty(e)
                if in_table && e.name().as_ref() == "table:table-row" =>
            {
                let repeat: u64 = attr(&e, "table:number-rows-repeated")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1)
                    .max(1);
                if matches!(
                    attr(&e, "table:visibility").as_deref(),
                    Some("collapsed" | "filter")
                ) {
                    for r in row + 1..=row + repeat.min(MAX_ODS_REPEAT) {
                        hidden.insert(r);
                    }
                }
                row = row.saturating_add(repeat);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xlsx_rows_marked_hidden_are_found() {
        let xml = br#"<worksheet><sheetData><row r="1"><c r="A1"/></row><row r="3" hidden="1"><c r="A3"/></row><row hidden="true"/><row r="9" hidden="0"/></sheetData></worksheet>"#;
        let rows = xlsx_rows(&xml[..]).unwrap();
        assert_eq!(rows.into_iter().collect::<Vec<_>>(), vec![3, 4]);
    }

    #[test]
    fn ods_collapsed_and_filtered_rows_count_repeats() {
        let xml = br#"<office:body><table:table table:name="Other"><table:table-row table:visibility="collapsed"/></table:table><table:table table:name="Paie"><table:table-row><table:table-cell/></table:table-row><table:table-row table:number-rows-repeated="2"/><table:table-row table:visibility="filter"><table:table-cell/></table:table-row><table:table-row table:visibility="collapsed" table:number-rows-repeated="2"/></table:table></office:body>"#;
        let rows = ods_rows(&xml[..], "Paie").unwrap();
        assert_eq!(rows.into_iter().collect::<Vec<_>>(), vec![4, 5, 6]);
    }
}
