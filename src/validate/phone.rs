//! Phone numbers to E.164, fast. The `phonenumber` crate is the authority
//! (Google's libphonenumber metadata), but it looks every regular
//! expression up by its source text in a 100-entry LRU cache on each use:
//! about 10 µs a number, and far worse once a file's countries need more
//! than 100 expressions and the cache thrashes. At a million rows that is
//! the whole budget.
//!
//! So a number already written in international form (`+CC...`) is checked
//! here against the same metadata with expressions compiled once per
//! country code, replicating the crate's `is_valid` exactly; it is only
//! taken when the crate's parser would leave its digits unchanged (no
//! national prefix to strip, no leading zero). Everything else (national
//! numbers, numbers the fast check does not accept, non-geographic codes)
//! goes through the crate itself, so rejections and their messages are
//! always the crate's verdict. A test compares both paths on many numbers.

use super::fields;
use phonenumber::country;
use phonenumber::metadata::{DATABASE, Descriptor, Metadata};
use regex::{Regex, RegexBuilder};
use std::cell::OnceCell;
use std::collections::HashMap;

/// Phone normalisation with the per-country expressions it has compiled.
pub struct Phones {
    region: Option<country::Id>,
    /// Per country code: its regions, or `None` when numbers of that code
    /// always take the crate's path.
    codes: HashMap<u16, Option<Code>>,
    digits: String,
}

/// Where each expression of a region sits in [`Region::compiled`].
const GENERAL: usize = 0;
const LEADING_DIGITS: usize = 1;
const PREFIX_FOR_PARSING: usize = 2;
/// Typed descriptors start here, in the order the crate's `number_type`
/// tries them (the order does not change validity, only the type).
const FIRST_TYPE: usize = 3;
const TYPES: usize = 10;

/// One region of a country code: the crate's metadata, and its expressions
/// compiled on first use (compiling every region of +1 up front would cost
/// megabytes for expressions most files never need).
struct Region {
    meta: &'static Metadata,
    compiled: [OnceCell<Option<Regex>>; FIRST_TYPE + TYPES],
}

/// The regions of a country code, in the database's order.
struct Code {
    regions: Vec<Region>,
}

/// Compiles an expression as the crate's database does (verbose mode).
fn compile(source: &str) -> Option<Regex> {
    RegexBuilder::new(source)
        .ignore_whitespace(true)
        .build()
        .ok()
}

impl Code {
    /// `None` for non-geographic codes and codes with a region the crate
    /// cannot name (both left to the crate).
    fn load(code: u16) -> Option<Code> {
        let db: &'static phonenumber::metadata::Database = &DATABASE;
        let ids = db.region(&code)?;
        let mut regions = Vec::new();
        for id in ids {
            if id == "001" || id.parse::<country::Id>().is_err() {
                return None;
            }
            regions.push(Region {
                meta: db.by_id(id)?,
                compiled: Default::default(),
            });
        }
        Some(Code { regions })
    }

    /// The region the crate attributes `national` to (its `source_for`):
    /// the only one, else the first whose leading digits match or, for a
    /// region without leading digits, whose types accept the number.
    /// `Err` when an expression could not be compiled.
    fn region(&self, national: &str) -> Result<Option<&Region>, ()> {
        if let [only] = self.regions.as_slice() {
            return Ok(Some(only));
        }
        for r in &self.regions {
            let claims = match r.meta.leading_digits() {
                Some(re) => r
                    .regex(LEADING_DIGITS, re.as_str())?
                    .find(national)
                    .is_some_and(|m| m.start() == 0),
                None => r.is_valid(national)?,
            };
            if claims {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

impl Region {
    fn regex(&self, slot: usize, source: &str) -> Result<&Regex, ()> {
        self.compiled[slot]
            .get_or_init(|| compile(source))
            .as_ref()
            .ok_or(())
    }

    /// As `phonenumber::metadata::Descriptor::is_match`.
    fn matches(&self, slot: usize, d: &Descriptor, national: &str) -> Result<bool, ()> {
        let lengths = d.possible_length();
        if !lengths.is_empty() && !lengths.contains(&(national.len() as u16)) {
            return Ok(false);
        }
        Ok(self
            .regex(slot, d.national_number().as_str())?
            .find(national)
            .is_some_and(|m| m.start() == 0))
    }

    /// True when the crate's parser would keep `national` as it is: no
    /// national prefix (or prefix-for-parsing pattern) at its start.
    fn parser_keeps(&self, national: &str) -> Result<bool, ()> {
        if self
            .meta
            .national_prefix()
            .is_some_and(|p| !p.is_empty() && national.starts_with(p))
        {
            return Ok(false);
        }
        Ok(match self.meta.national_prefix_for_parsing() {
            Some(re) => self
                .regex(PREFIX_FOR_PARSING, re.as_str())?
                .find(national)
                .is_none_or(|m| m.start() != 0),
            None => true,
        })
    }

    /// As `phonenumber::is_valid` for this region: the number's type is
    /// not `Unknown` (the general descriptor and at least one typed one
    /// match).
    fn is_valid(&self, national: &str) -> Result<bool, ()> {
        let d = self.meta.descriptors();
        if !self.matches(GENERAL, d.general(), national)? {
            return Ok(false);
        }
        let types: [Option<&Descriptor>; TYPES] = [
            d.premium_rate(),
            d.toll_free(),
            d.shared_cost(),
            d.voip(),
            d.personal_number(),
            d.pager(),
            d.uan(),
            d.voicemail(),
            d.fixed_line(),
            d.mobile(),
        ];
        for (i, desc) in types.into_iter().enumerate() {
            if let Some(desc) = desc
                && self.matches(FIRST_TYPE + i, desc, national)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Bounds of a national significant number (the crate's
/// `MIN_LENGTH_FOR_NSN` and `MAX_LENGTH_FOR_NSN`).
const NSN_LENGTH: std::ops::RangeInclusive<usize> = 2..=17;

impl Phones {
    pub fn new(region: Option<country::Id>) -> Phones {
        Phones {
            region,
            codes: HashMap::new(),
            digits: String::new(),
        }
    }

    /// The number in E.164, or why it is refused and how to fix it.
    pub fn normalize(&mut self, value: &str) -> Result<String, super::Reason> {
        if let Some(e164) = self.fast(value) {
            return Ok(e164);
        }
        fields::phone(value, self.region)
    }

    /// The E.164 form of `digits` read as a number of the configured
    /// region, as the crate reads a number written without `+`: national
    /// (with its trunk prefix), or starting with the region's country code.
    /// A string too long to be national takes the fast path when it can.
    /// `None` without a region, or when the digits are no valid number.
    pub(super) fn in_region(&mut self, digits: &str) -> Option<String> {
        let region = self.region?;
        let meta = DATABASE.by_id(region.as_ref())?;
        let code = meta.country_code().to_string();
        let longest = meta
            .descriptors()
            .general()
            .possible_length()
            .iter()
            .max()
            .map_or(*NSN_LENGTH.end(), |&n| usize::from(n));
        if digits.len() > longest
            && digits.starts_with(&code)
            && let Some(e164) = self.international(digits)
        {
            return Some(e164);
        }
        if digits.len() > longest + code.len() {
            return None;
        }
        fields::phone(digits, Some(region)).ok()
    }

    /// The E.164 form of `+digits` when the fast check takes it as a valid
    /// international number; `None` otherwise (the crate is not asked: a
    /// digit string that is no phone number must stay cheap).
    pub(super) fn international(&mut self, digits: &str) -> Option<String> {
        let mut plus = String::with_capacity(digits.len() + 1);
        plus.push('+');
        plus.push_str(digits);
        self.fast(&plus)
    }

    /// The E.164 form of a valid international number whose digits the
    /// crate would keep as written; `None` means "ask the crate".
    fn fast(&mut self, value: &str) -> Option<String> {
        let rest = value.strip_prefix('+')?;
        self.digits.clear();
        for c in rest.chars() {
            match c {
                '0'..='9' => self.digits.push(c),
                ' ' | '\u{a0}' | '.' | '-' | '/' => {}
                _ => return None,
            }
        }
        // Country codes are a prefix code (ITU E.164): at most one of the
        // first 1, 2 or 3 digits is assigned.
        let (code, national) = (1..=3).find_map(|n| {
            let code: u16 = self.digits.get(..n)?.parse().ok()?;
            DATABASE.region(&code).map(|_| (code, &self.digits[n..]))
        })?;
        if !NSN_LENGTH.contains(&national.len()) {
            return None;
        }
        let regions = self
            .codes
            .entry(code)
            .or_insert_with(|| Code::load(code))
            .as_ref()?;
        // The crate picks the region of a shared code from the number
        // without its leading zeros, and validates it with them: such
        // numbers are left to it.
        if regions.regions.len() > 1 && national.starts_with('0') {
            return None;
        }
        let region = regions.region(national).ok()??;
        let valid = region.parser_keeps(national).ok()? && region.is_valid(national).ok()?;
        valid.then(|| format!("+{}", self.digits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fast_path_takes_common_numbers() {
        let mut p = Phones::new(None);
        for (input, e164) in [
            ("+2250701020304", "+2250701020304"),
            ("+225 07 01 02 03 04", "+2250701020304"),
            ("+233 24-123-4567", "+233241234567"),
            ("+254712345678", "+254712345678"),
            ("+234 803 123 4567", "+2348031234567"),
            ("+221 77 123 45 67", "+221771234567"),
            ("+33 6 12 34 56 78", "+33612345678"),
            // Codes shared by several regions.
            ("+1 202 555 0143", "+12025550143"),
            ("+1 416 555 0123", "+14165550123"),
            ("+44 7911 123456", "+447911123456"),
        ] {
            assert_eq!(p.fast(input).as_deref(), Some(e164), "{input}");
            assert_eq!(p.normalize(input).as_deref(), Ok(e164), "{input}");
        }
    }

    #[test]
    fn other_numbers_go_to_the_crate() {
        let mut p = Phones::new(None);
        // National prefix written after the country code: the crate strips it.
        assert_eq!(p.fast("+33 06 12 34 56 78"), None);
        assert_eq!(
            p.normalize("+33 06 12 34 56 78").as_deref(),
            Ok("+33612345678")
        );
        // A leading zero after a shared code (+39 is Italy and the Vatican).
        assert_eq!(p.fast("+39 06 6982 1234"), None);
        assert_eq!(
            p.normalize("+39 06 6982 1234").as_deref(),
            Ok("+390669821234")
        );
        // Invalid numbers get the crate's verdict and message.
        assert_eq!(p.fast("+225 12"), None);
        assert!(
            p.normalize("+225 12")
                .unwrap_err()
                .to_string()
                .contains("not a valid phone number")
        );
        assert!(
            p.normalize("0701020304")
                .unwrap_err()
                .to_string()
                .contains("default_phone_region")
        );
        let mut ci = Phones::new(Some(fields::phone_region("CI").unwrap()));
        assert_eq!(
            ci.normalize("07 01 02 03 04").as_deref(),
            Ok("+2250701020304")
        );
    }

    /// The fast path agrees with the crate on every number it accepts, for
    /// all single-region country codes and arbitrary digits.
    #[test]
    fn fast_path_agrees_with_the_crate_exhaustively_sampled() {
        let mut codes: Vec<u16> = (1..1000u16)
            .filter(|c| DATABASE.region(c).is_some())
            .collect();
        codes.sort_unstable();
        let mut p = Phones::new(None);
        let mut taken = 0;
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for &code in &codes {
            // Each region's own example numbers (valid by construction),
            // then pseudo-random digit strings of every plausible length.
            let mut nationals: Vec<String> = Vec::new();
            if let Some(regions) = DATABASE.region(&code) {
                for id in regions {
                    if let Some(meta) = DATABASE.by_id(id) {
                        let d = meta.descriptors();
                        for desc in [d.general()].into_iter().chain(
                            [d.mobile(), d.fixed_line(), d.toll_free(), d.voip()]
                                .into_iter()
                                .flatten(),
                        ) {
                            if let Some(ex) = desc.example() {
                                nationals.push(ex.to_owned());
                            }
                        }
                    }
                }
            }
            for len in 4..=13 {
                for _ in 0..3 {
                    let mut s = String::new();
                    for _ in 0..len {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        s.push(char::from(b'0' + (seed % 10) as u8));
                    }
                    nationals.push(s);
                }
            }
            for national in nationals {
                let input = format!("+{code} {national}");
                if let Some(fast) = p.fast(&input) {
                    taken += 1;
                    let slow = fields::phone(&input, None);
                    assert_eq!(slow.as_deref(), Ok(fast.as_str()), "{input}");
                }
            }
        }
        assert!(taken > 500, "fast path taken only {taken} times");
    }

    proptest! {
        /// Whatever the fast path accepts, the crate accepts identically.
        #[test]
        fn fast_path_never_disagrees(
            code in prop::sample::select(vec![225u16, 221, 226, 223, 233, 254, 234, 237, 33, 32, 49, 34, 353, 44, 39, 27, 255, 256, 250]),
            national in "[0-9]{6,12}",
            sep in prop::sample::select(vec!["", " ", "-", "."]),
        ) {
            let (a, b) = national.split_at(national.len() / 2);
            let input = format!("+{code}{sep}{a}{sep}{b}");
            let mut p = Phones::new(None);
            if let Some(fast) = p.fast(&input) {
                prop_assert_eq!(fields::phone(&input, None), Ok(fast));
            }
        }
    }
}
