//! Passwords out of text that is kept or shown: a study file is stored
//! verbatim with its results (for reproducibility), and results databases
//! are what people share. [`redact_text`] replaces the password of every
//! URL (`scheme://user:PASSWORD@host`) and the value of every `password`
//! key (`password = "…"`, also inside inline tables) with `***`, leaving
//! every other byte as written.

/// What a password is replaced with.
pub const MASK: &str = "***";

/// `url` without its password (when it parses as a URL and has one).
pub fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            // Only fails for URLs that cannot have one, which this one has.
            let _ = u.set_password(None);
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// `text` with its passwords replaced by [`MASK`].
pub fn redact_text(text: &str) -> String {
    redact_keys(&redact_urls(text))
}

/// The password of every `scheme://user:password@…` in `text`.
fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the path, query, fragment, a quote or a
        // space; the user information is what comes before its last '@'.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '`') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => match authority[..at].find(':') {
                Some(colon) => {
                    out.push_str(&authority[..=colon]);
                    out.push_str(MASK);
                    out.push_str(&authority[at..]);
                }
                None => out.push_str(authority),
            },
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The quoted value of every `password = …` (any case; a bare or quoted
/// key) in `text`.
fn redact_keys(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(k) = lower[from..].find("password") {
        let key = from + k;
        from = key + "password".len();
        // Any key ending in `password` counts (`db_password`, as some
        // configurations spell it); `password_env` does not.
        let mut j = from;
        let bytes = text.as_bytes();
        if matches!(bytes.get(j), Some(b'"' | b'\'')) {
            j += 1;
        }
        while matches!(bytes.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        if bytes.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        while matches!(bytes.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let Some(&quote) = bytes.get(j).filter(|q| matches!(q, b'"' | b'\'')) else {
            continue;
        };
        let start = j + 1;
        // TOML basic strings escape quotes with a backslash.
        let mut e = start;
        while e < bytes.len() && bytes[e] != quote && bytes[e] != b'\n' {
            e += if bytes[e] == b'\\' && quote == b'"' {
                2
            } else {
                1
            };
        }
        let e = e.min(bytes.len());
        out.push_str(&text[done..start]);
        out.push_str(MASK);
        done = e;
        from = e;
    }
    out.push_str(&text[done..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password_and_nothing_else() {
        let t = "url = \"mysql://sec:S3cretPw9@127.0.0.1:3317/sbtest\"\n# and postgres://u:p%40ss@h/db?x=1 in a comment\n";
        assert_eq!(
            redact_text(t),
            "url = \"mysql://sec:***@127.0.0.1:3317/sbtest\"\n# and postgres://u:***@h/db?x=1 in a comment\n"
        );
        // A password holding '@' (the last '@' ends the user information).
        assert_eq!(
            redact_text("postgres://u:a@b@host:5/db"),
            "postgres://u:***@host:5/db"
        );
        for same in [
            "sqlite:///tmp/x.db",
            "postgres://sbtest@127.0.0.1:5433/sbtest",
            "http://host:80/path",
            "no url at all",
            "",
        ] {
            assert_eq!(redact_text(same), same);
        }
    }

    #[test]
    fn urls_can_lose_their_password_entirely() {
        assert_eq!(
            without_password("postgres://sbtest:secret@127.0.0.1:5433/sbtest"),
            "postgres://sbtest@127.0.0.1:5433/sbtest"
        );
        assert_eq!(without_password("sqlite:///tmp/x.db"), "sqlite:///tmp/x.db");
        assert_eq!(without_password("not a url"), "not a url");
    }

    #[test]
    fn password_keys_lose_their_values() {
        let t = "[[target]]\npassword = \"hunter2\" # why\nPassword='x y'\nsettings = { user = \"a\", password = \"b\\\"c\" }\npassword_env = \"PGPASS\"\n";
        assert_eq!(
            redact_text(t),
            "[[target]]\npassword = \"***\" # why\nPassword='***'\nsettings = { user = \"a\", password = \"***\" }\npassword_env = \"PGPASS\"\n"
        );
        // Not a key with a string value: left alone.
        for same in [
            "password",
            "password = 12",
            "the password is",
            "password =\n\"x\"",
        ] {
            assert_eq!(redact_text(same), same);
        }
    }
}
