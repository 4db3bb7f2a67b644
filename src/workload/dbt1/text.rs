//! The strings of TPC-W's data: DigSyl words, random a-strings and
//! n-strings, item titles and author names built around DigSyl words (so
//! that searches find them), and the fixed lists (subjects, countries,
//! card types, …).
//!
//! TPC-W builds titles from a word-frequency grammar in its own
//! generator (WGEN). Its property that matters to the benchmark is that
//! item `i`'s title (for `i ≤ items/5`; a random one of those otherwise)
//! holds the 14-character word `DigSyl(i, 7)`, whole or spliced into a
//! word, inside 14–60 characters of text, and that author `a`'s last name
//! is `DigSyl(a, 7)` (for `a ≤ authors/2.5`) with a short suffix a quarter
//! of the time: a title or author search for `DigSyl(NURand(…), 7)` then
//! finds a few items. The text around the word comes here from a small
//! vocabulary of this project's own, not WGEN's grammar.

use crate::rand::{Rng, ALNUM, DIGITS};

/// TPC-W's syllables for the digits 0–9 (clause 4.6.2.9).
const SYLLABLES: [&str; 10] = ["BA", "OG", "AL", "RI", "RE", "SE", "AT", "UL", "IN", "NG"];

/// `DigSyl(n, width)`: each decimal digit of `n` as its syllable, padded
/// with leading zeros ("BA") to `width` digits; `width` 0: as many as `n`
/// has. (TPC-W's user names are `DigSyl(c_id, 0)`.)
pub fn digsyl(n: u64, width: usize, out: &mut String) {
    let digits = n.to_string();
    for _ in digits.len()..width {
        out.push_str(SYLLABLES[0]);
    }
    for d in digits.bytes() {
        out.push_str(SYLLABLES[usize::from(d - b'0')]);
    }
}

/// `DigSyl(n, width)` as a new string.
pub fn digsyl_string(n: u64, width: usize) -> String {
    let mut s = String::with_capacity(2 * width.max(10));
    digsyl(n, width, &mut s);
    s
}

/// TPC-W's a-string: `min..=max` random letters and digits.
pub fn a_string(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let n = rng.uniform(min, max);
    rng.push_chars(ALNUM, n as usize, out);
}

/// TPC-W's n-string: `min..=max` random digits.
pub fn n_string(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let n = rng.uniform(min, max);
    rng.push_chars(DIGITS, n as usize, out);
}

/// Words the text around a title's DigSyl word is made of.
const WORDS: &[&str] = &[
    "the", "of", "and", "a", "in", "night", "river", "garden", "silent", "winter", "house",
    "letters", "from", "journey", "city", "light", "shadow", "stone", "last", "first", "secret",
    "history", "guide", "art", "small", "great", "long", "road", "home", "sea", "mountain",
    "glass", "story", "music", "painted", "broken", "golden", "quiet", "summer", "voices", "map",
    "under", "over", "beyond", "between", "tides", "forest", "machine", "empire", "island",
    "theory", "practice", "notes", "lessons", "kitchen", "window", "bridge", "harbor", "orchard",
    "engine", "atlas", "lantern", "winds", "child", "king", "queen", "weather", "market", "field",
    "ashes",
];

/// Subjects of items (clause 4.7.1; DBT-1 misspells RELIGION).
pub const SUBJECTS: [&str; 24] = [
    "ARTS",
    "BIOGRAPHIES",
    "BUSINESS",
    "CHILDREN",
    "COMPUTERS",
    "COOKING",
    "HEALTH",
    "HISTORY",
    "HOME",
    "HUMOR",
    "LITERATURE",
    "MYSTERY",
    "NON-FICTION",
    "PARENTING",
    "POLITICS",
    "REFERENCE",
    "RELIGION",
    "ROMANCE",
    "SELF-HELP",
    "SCIENCE-NATURE",
    "SCIENCE-FICTION",
    "SPORTS",
    "YOUTH",
    "TRAVEL",
];

pub const BACKINGS: [&str; 5] = ["HARDBACK", "PAPERBACK", "USED", "AUDIO", "LIMITED-EDITION"];
pub const CARD_TYPES: [&str; 5] = ["VISA", "MASTERCARD", "DISCOVER", "AMEX", "DINERS"];
pub const SHIP_TYPES: [&str; 6] = ["AIR", "UPS", "FEDEX", "SHIP", "COURIER", "MAIL"];
pub const STATUSES: [&str; 4] = ["PROCESSING", "SHIPPED", "PENDING", "DENIED"];

/// The 92 countries of the country table (TPC-W's count), with a currency
/// name each.
pub const COUNTRIES: [(&str, &str); 92] = [
    ("United States", "Dollars"),
    ("United Kingdom", "Pounds"),
    ("Canada", "Dollars"),
    ("Germany", "Euros"),
    ("France", "Euros"),
    ("Japan", "Yen"),
    ("Netherlands", "Euros"),
    ("Italy", "Euros"),
    ("Switzerland", "Francs"),
    ("Australia", "Dollars"),
    ("Algeria", "Dinars"),
    ("Argentina", "Pesos"),
    ("Armenia", "Drams"),
    ("Austria", "Euros"),
    ("Azerbaijan", "Manat"),
    ("Bahamas", "Dollars"),
    ("Bahrain", "Dinars"),
    ("Bangladesh", "Taka"),
    ("Barbados", "Dollars"),
    ("Belarus", "Rubles"),
    ("Belgium", "Euros"),
    ("Bermuda", "Dollars"),
    ("Bolivia", "Bolivianos"),
    ("Botswana", "Pula"),
    ("Brazil", "Reais"),
    ("Bulgaria", "Leva"),
    ("Cayman Islands", "Dollars"),
    ("Chad", "Francs"),
    ("Chile", "Pesos"),
    ("China", "Yuan"),
    ("Christmas Island", "Dollars"),
    ("Colombia", "Pesos"),
    ("Croatia", "Euros"),
    ("Cuba", "Pesos"),
    ("Cyprus", "Euros"),
    ("Czech Republic", "Koruny"),
    ("Denmark", "Kroner"),
    ("Dominican Republic", "Pesos"),
    ("Eastern Caribbean", "Dollars"),
    ("Ecuador", "Dollars"),
    ("Egypt", "Pounds"),
    ("El Salvador", "Dollars"),
    ("Estonia", "Euros"),
    ("Ethiopia", "Birr"),
    ("Falkland Island", "Pounds"),
    ("Faroe Island", "Kroner"),
    ("Fiji", "Dollars"),
    ("Finland", "Euros"),
    ("Gabon", "Francs"),
    ("Gibraltar", "Pounds"),
    ("Greece", "Euros"),
    ("Guam", "Dollars"),
    ("Hong Kong", "Dollars"),
    ("Hungary", "Forint"),
    ("Iceland", "Kronur"),
    ("India", "Rupees"),
    ("Indonesia", "Rupiahs"),
    ("Iran", "Rials"),
    ("Iraq", "Dinars"),
    ("Ireland", "Euros"),
    ("Israel", "Shekels"),
    ("Jamaica", "Dollars"),
    ("Jordan", "Dinars"),
    ("Kazakhstan", "Tenge"),
    ("Kuwait", "Dinars"),
    ("Lebanon", "Pounds"),
    ("Luxembourg", "Euros"),
    ("Malaysia", "Ringgits"),
    ("Mauritius", "Rupees"),
    ("Mexico", "Pesos"),
    ("New Zealand", "Dollars"),
    ("Norway", "Kroner"),
    ("Pakistan", "Rupees"),
    ("Philippines", "Pesos"),
    ("Poland", "Zlotych"),
    ("Portugal", "Euros"),
    ("Romania", "Lei"),
    ("Russia", "Rubles"),
    ("Saudi Arabia", "Riyals"),
    ("Singapore", "Dollars"),
    ("Slovakia", "Euros"),
    ("South Africa", "Rand"),
    ("South Korea", "Won"),
    ("Spain", "Euros"),
    ("Sudan", "Pounds"),
    ("Sweden", "Kronor"),
    ("Taiwan", "Dollars"),
    ("Thailand", "Baht"),
    ("Trinidad", "Dollars"),
    ("Turkey", "Lira"),
    ("Venezuela", "Bolivares"),
    ("Zambia", "Kwacha"),
];

/// Item `item`'s title: 14–60 characters of text holding `DigSyl(d, 7)`,
/// `d` being the item itself for the first fifth of the items and a
/// random one of that fifth for the rest; a quarter of the words are
/// spliced onto a neighbouring word.
pub fn title(rng: &mut Rng, item: u64, items: u64, out: &mut String) {
    let fifth = (items / 5).max(1);
    let d = if item <= fifth {
        item
    } else {
        u64::from(rng.uniform(1, fifth as u32))
    };
    let mut base = String::with_capacity(64);
    let len = rng.uniform(14, 44) as usize;
    while base.len() < len {
        if !base.is_empty() {
            base.push(' ');
        }
        base.push_str(WORDS[rng.uniform(0, WORDS.len() as u32 - 1) as usize]);
    }
    let word = digsyl_string(d, 7);
    // Insert at a word boundary (or spliced onto the next word).
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(base.match_indices(' ').map(|(i, _)| i + 1))
        .collect();
    let at = bounds[rng.uniform(0, bounds.len() as u32 - 1) as usize];
    let splice = rng.uniform(1, 100) <= 25;
    out.push_str(&base[..at]);
    out.push_str(&word);
    if at < base.len() && !splice {
        out.push(' ');
    }
    out.push_str(&base[at..]);
    if out.len() > 60 {
        // Cut at a word boundary after the DigSyl word.
        let keep = out[..=60]
            .rfind(' ')
            .filter(|&i| i >= at + word.len())
            .unwrap_or(at + word.len());
        out.truncate(keep.max(at + word.len()).min(60));
    }
}

/// Author `author`'s last name: `DigSyl(d, 7)`, `d` the author itself for
/// the first authors/2.5 and a random one of those otherwise, with a
/// random 1–6 character suffix a quarter of the time (at most 20).
pub fn author_lname(rng: &mut Rng, author: u64, authors: u64, out: &mut String) {
    let span = ((authors as f64 / 2.5) as u64).max(1);
    let d = if author <= span {
        author
    } else {
        u64::from(rng.uniform(1, span as u32))
    };
    digsyl(d, 7, out);
    if rng.uniform(1, 100) <= 25 {
        a_string(rng, 1, 6, out);
    }
    out.truncate(20);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digsyl_matches_tpcw() {
        // TPC-W's own examples (clause 4.6.2.9).
        assert_eq!(digsyl_string(4, 0), "RE");
        assert_eq!(digsyl_string(100, 0), "OGBABA");
        assert_eq!(digsyl_string(100, 5), "BABAOGBABA");
        assert_eq!(digsyl_string(1972, 0), "OGNGULAL");
        assert_eq!(digsyl_string(1972, 6), "BABAOGNGULAL");
    }

    #[test]
    fn titles_hold_their_word_and_fit() {
        let mut rng = Rng::new(7);
        for item in 1..=2000u64 {
            let mut t = String::new();
            title(&mut rng, item, 10_000, &mut t);
            assert!(t.len() >= 14 && t.len() <= 60, "{t:?}");
            if item <= 2000 {
                assert!(t.contains(&digsyl_string(item, 7)), "{item}: {t:?}");
            }
        }
        let mut a = String::new();
        author_lname(&mut rng, 3, 2500, &mut a);
        assert!(a.starts_with(&digsyl_string(3, 7)) && a.len() <= 20);
    }
}
