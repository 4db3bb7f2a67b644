//! Passwords that stay off the command line, as the engines' own clients
//! take them: for a server URL without a password, PostgreSQL's
//! `PGPASSWORD`, then its password file (`PGPASSFILE`, else `~/.pgpass`,
//! used only when no one but its owner can read it, as libpq does);
//! MySQL's `MYSQL_PWD`, then the `[client]` section of an option file given
//! as `?defaults-file=PATH` in the URL (`mysql --defaults-file`'s format).
//! A command line shows in `ps` to every user of the machine; these do not.

use std::path::{Path, PathBuf};

/// Where a password may come from, looked up through `env` (the process's
/// environment, or a test's).
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The user's home directory (for `~/.pgpass`).
    pub home: Option<PathBuf>,
}

impl Sources<'_> {
    /// The process's own environment and home.
    pub fn process() -> Sources<'static> {
        Sources {
            env: &|name| std::env::var(name).ok(),
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }
}

/// PostgreSQL: `PGPASSWORD`, else the first matching line of the password
/// file. `host` is `localhost` for a Unix socket, as libpq matches it.
pub fn postgres(
    s: &Sources,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Result<Option<String>, String> {
    if let Some(p) = (s.env)("PGPASSWORD") {
        return Ok(Some(p));
    }
    let file = match (s.env)("PGPASSFILE") {
        Some(f) => PathBuf::from(f),
        None => match &s.home {
            Some(h) => h.join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(meta) = std::fs::metadata(&file) else {
        return Ok(None);
    };
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "password file {} has group or world access: make it readable by you only (chmod 0600 {})",
            file.display(),
            file.display()
        ));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(pgpass_lookup(&text, host, port, database, user))
}

/// The password of the first `host:port:database:user:password` line that
/// matches (`*` matches anything; `\:` and `\\` are a colon and a
/// backslash); comments start with `#`.
pub fn pgpass_lookup(
    text: &str,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_escaped(line);
        if fields.len() < 5 {
            continue;
        }
        let want = [host, port.as_str(), database, user];
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_escaped(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().unwrap().push(n);
                }
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// MySQL: `MYSQL_PWD`, else `password` of the `[client]` section of
/// `defaults_file`.
pub fn mysql(s: &Sources, defaults_file: Option<&Path>) -> Result<Option<String>, String> {
    if let Some(p) = (s.env)("MYSQL_PWD") {
        return Ok(Some(p));
    }
    let Some(file) = defaults_file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("option file {}: {e}", file.display()))?;
    Ok(option_file_password(&text))
}

/// `password` in the `[client]` section of a MySQL option file (values may
/// be quoted; the last one given wins, as in MySQL).
pub fn option_file_password(text: &str) -> Option<String> {
    option_file_client(text)
        .into_iter()
        .rfind(|(k, _)| k == "password")
        .map(|(_, v)| v)
}

/// The `name = value` options of a MySQL option file's `[client]`
/// section, in order (names in lower case, values unquoted; options
/// without a value left out).
pub fn option_file_client(text: &str) -> Vec<(String, String)> {
    let mut in_client = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_client = section.trim().eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            found.push((k.trim().to_ascii_lowercase(), v.to_string()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_match_in_order_with_wildcards_and_escapes() {
        let text = "# comment\n127.0.0.1:5432:other:sbtest:no\n*:5432:sbtest:sbtest:first\\:colon\n*:*:*:*:any\n";
        assert_eq!(
            pgpass_lookup(text, "127.0.0.1", 5432, "sbtest", "sbtest").as_deref(),
            Some("first:colon")
        );
        assert_eq!(
            pgpass_lookup(text, "h", 1, "x", "y").as_deref(),
            Some("any")
        );
        assert_eq!(pgpass_lookup("a:1:b:c\n", "a", 1, "b", "c"), None);
    }

    #[test]
    fn the_environment_comes_first_and_a_readable_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:fromfile\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let f = file.display().to_string();
        let env = |n: &str| (n == "PGPASSFILE").then(|| f.clone());
        let s = Sources {
            env: &env,
            home: None,
        };
        assert_eq!(
            postgres(&s, "h", 5432, "d", "u").unwrap().as_deref(),
            Some("fromfile")
        );
        let env2 = |n: &str| match n {
            "PGPASSWORD" => Some("fromenv".to_string()),
            "PGPASSFILE" => Some(f.clone()),
            _ => None,
        };
        let s = Sources {
            env: &env2,
            home: None,
        };
        assert_eq!(
            postgres(&s, "h", 5432, "d", "u").unwrap().as_deref(),
            Some("fromenv")
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let s = Sources {
            env: &env,
            home: None,
        };
        let e = postgres(&s, "h", 5432, "d", "u").unwrap_err();
        assert!(e.contains("chmod 0600"), "{e}");
        // Nothing anywhere: no password.
        let none = |_: &str| None;
        let s = Sources {
            env: &none,
            home: Some(dir.path().join("nohome")),
        };
        assert_eq!(postgres(&s, "h", 5432, "d", "u").unwrap(), None);
    }

    #[test]
    fn mysql_option_files_give_the_client_sections_password() {
        let text = "[mysqld]\npassword=server\n[client]\nuser = sbtest\npassword = \"s3 cret\"\n[mysql]\npassword=other\n";
        assert_eq!(option_file_password(text).as_deref(), Some("s3 cret"));
        assert_eq!(option_file_password("[client]\nuser=x\n"), None);
        let env = |n: &str| (n == "MYSQL_PWD").then(|| "env".to_string());
        let s = Sources {
            env: &env,
            home: None,
        };
        assert_eq!(mysql(&s, None).unwrap().as_deref(), Some("env"));
    }
}
