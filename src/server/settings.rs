//! Server settings and CPU lists as the user writes them (`--set name=value`,
//! `--cpus 0-1,3`): parsing, validation and merging over the base settings.
//! Pure functions; the engines render the merged list into their config files.

use super::{ServerError, ServerKind};

/// Parses one `name=value` setting. A bare `name` (value `""`) is allowed for
/// MariaDB's flag options such as `skip-log-bin`; PostgreSQL rejects it when
/// the spec is validated.
pub fn parse_setting(s: &str) -> Result<(String, String), ServerError> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n.trim(), v.trim()),
        None => (s.trim(), ""),
    };
    check_name(name)?;
    check_value(name, value)?;
    Ok((name.to_string(), value.to_string()))
}

/// Checks a whole list of settings for `kind`: names and values a config file
/// can hold without being able to inject other lines.
pub(crate) fn validate(kind: ServerKind, settings: &[(String, String)]) -> Result<(), ServerError> {
    for (name, value) in settings {
        check_name(name)?;
        check_value(name, value)?;
        if kind == ServerKind::Postgres && value.is_empty() {
            return Err(ServerError::BadSetting {
                kind,
                message: format!(
                    "setting '{name}' has no value: PostgreSQL settings are name=value, e.g. work_mem=64MB"
                ),
            });
        }
    }
    Ok(())
}

/// Setting names are identifiers: letters, digits, `_`, `-` and `.` (for
/// PostgreSQL's `extension.parameter`).
pub(super) fn check_name(name: &str) -> Result<(), ServerError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ServerError::BadInput(format!(
            "bad setting name '{name}': expected name=value with a name of letters, digits, '_', '-' or '.', e.g. max_connections=500"
        )))
    }
}

/// Values may hold anything printable but line breaks, which would start a
/// new line (and a new setting) in the config file.
pub(super) fn check_value(name: &str, value: &str) -> Result<(), ServerError> {
    if value.chars().any(|c| c.is_control()) {
        return Err(ServerError::BadInput(format!(
            "bad value for setting '{name}': it contains a line break or control character"
        )));
    }
    Ok(())
}

/// The key two spellings of a setting share: MariaDB treats `-` and `_` alike,
/// and both servers ignore case. Without a kind (a server dbsweep does not
/// manage), both rules apply.
pub fn setting_key(kind: Option<ServerKind>, name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match kind {
        Some(ServerKind::Postgres) => lower,
        _ => lower.replace('-', "_"),
    }
}

pub(crate) fn normalize(kind: ServerKind, name: &str) -> String {
    setting_key(Some(kind), name)
}

/// `base` with `overrides` applied: same-named settings (by
/// [`setting_key`]) replaced in place, new ones appended.
pub fn merge_settings(
    kind: Option<ServerKind>,
    base: &[(String, String)],
    overrides: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = base.to_vec();
    for (k, v) in overrides {
        match out
            .iter_mut()
            .find(|(n, _)| setting_key(kind, n) == setting_key(kind, k))
        {
            Some(slot) => *slot = (k.clone(), v.clone()),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The base settings without the ones the user overrides, in their order.
/// The user's settings are rendered after them (and after the user's config
/// file), so the list of what dbsweep wrote is `merged base + user`.
pub(crate) fn base_without_overrides(
    kind: ServerKind,
    base: &[(&str, &str)],
    user: &[(String, String)],
) -> Vec<(String, String)> {
    base.iter()
        .filter(|(name, _)| {
            !user
                .iter()
                .any(|(u, _)| normalize(kind, u) == normalize(kind, name))
        })
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// Parses a CPU list as the kernel writes it (`0-3,8,10-11`) into sorted,
/// deduplicated CPU numbers.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, ServerError> {
    let bad = || {
        ServerError::BadInput(format!(
            "bad CPU list '{s}': expected CPU numbers and ranges, e.g. 0 or 0-1 or 0,2-3"
        ))
    };
    let mut cpus = Vec::new();
    for part in s.trim().split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                if a > b {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPU numbers as the kernel does: `[0,1,2,5]` → `0-2,5`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        while i + 1 < sorted.len() && sorted[i + 1] == sorted[i] + 1 {
            i += 1;
        }
        parts.push(if sorted[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", sorted[i])
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_settings() {
        assert_eq!(
            parse_setting("max_connections=321").unwrap(),
            ("max_connections".into(), "321".into())
        );
        assert_eq!(
            parse_setting(" work_mem = 7MB ").unwrap(),
            ("work_mem".into(), "7MB".into())
        );
        assert_eq!(
            parse_setting("skip-log-bin").unwrap(),
            ("skip-log-bin".into(), "".into())
        );
        assert_eq!(
            parse_setting("auto_explain.log_min_duration=0").unwrap().0,
            "auto_explain.log_min_duration"
        );
        assert_eq!(
            parse_setting("sql_mode=A,B=C").unwrap().1,
            "A,B=C",
            "only the first '=' separates"
        );
        assert!(parse_setting("=1").is_err());
        assert!(parse_setting("a b=1").is_err());
        assert!(parse_setting("x=1\ny=2").is_err());
    }

    #[test]
    fn postgres_settings_need_values() {
        let flag = vec![("fsync".to_string(), String::new())];
        assert!(validate(ServerKind::Mariadb, &flag).is_ok());
        let e = validate(ServerKind::Postgres, &flag).unwrap_err();
        assert!(
            e.is_bad_input() && e.to_string().contains("no value"),
            "{e}"
        );
    }

    #[test]
    fn user_settings_override_base_in_any_spelling() {
        let base = [("max_connections", "2000"), ("local_infile", "1")];
        let user = vec![("Max-Connections".to_string(), "5".to_string())];
        assert_eq!(
            base_without_overrides(ServerKind::Mariadb, &base, &user),
            vec![("local_infile".to_string(), "1".to_string())]
        );
        // PostgreSQL does not equate '-' and '_'.
        let user = vec![("local-infile".to_string(), "0".to_string())];
        assert_eq!(
            base_without_overrides(ServerKind::Postgres, &base, &user).len(),
            2
        );
    }

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("3,0-1,1").unwrap(), vec![0, 1, 3]);
        assert_eq!(parse_cpu_list("8-10, 12").unwrap(), vec![8, 9, 10, 12]);
        assert!(parse_cpu_list("").is_err());
        assert!(parse_cpu_list("2-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert_eq!(format_cpu_list(&[5, 0, 1, 2]), "0-2,5");
        assert_eq!(format_cpu_list(&[0]), "0");
        assert_eq!(format_cpu_list(&[1, 3]), "1,3");
        assert_eq!(format_cpu_list(&[]), "");
    }
}
