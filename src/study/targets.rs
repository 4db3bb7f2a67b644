//! Validation of `[[target]]`s: kinds, managed-server settings, CPU sets.

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::load::{check_file_name, Loader, R};
use super::model::*;
use super::raw::*;
use crate::driver::{PsMode, Target, TargetKind as UrlKind};
use crate::server::{setting_key, PoolerSpec, ServerKind};

/// What a URL target is called without `name = …`.
fn url_kind_name(kind: &UrlKind) -> &'static str {
    match kind {
        UrlKind::Sqlite { .. } => "sqlite",
        UrlKind::Postgres(_) => "postgres",
        UrlKind::Mysql(_) => "mysql",
        UrlKind::Fake(_) => "fake",
    }
}

/// A target's name without `name = …`: its kind, and a managed server's
/// version. Two versions of one server are two targets: the version is in
/// the default name (`postgres-9.6`), so every table and legend tells them
/// apart.
fn default_name(kind: &str, t: &RawTarget) -> String {
    match t.version.as_ref().filter(|_| t.server.is_some()) {
        Some(v) => format!("{kind}-{}", v.get_ref()),
        None => kind.to_string(),
    }
}

/// The names of a stored study file's targets in the file's order, as the
/// loader gives them: the order a report lists its series in, where the
/// points ran in shuffled blocks. None where the file does not parse.
pub fn stored_target_names(file_text: &str) -> Option<Vec<String>> {
    let raw: RawStudy = toml::from_str(file_text).ok()?;
    if raw.targets.is_empty() {
        return Some(vec!["sqlite".to_string()]);
    }
    raw.targets
        .iter()
        .map(|t| {
            let t = t.get_ref();
            if let Some(n) = &t.name {
                return Some(n.get_ref().clone());
            }
            let kind = if let Some(u) = &t.url {
                url_kind_name(&Target::parse(u.get_ref()).ok()?.kind)
            } else if t.sqlite.is_some() {
                "sqlite"
            } else {
                t.server
                    .as_ref()?
                    .get_ref()
                    .parse::<ServerKind>()
                    .ok()?
                    .name()
            };
            Some(default_name(kind, t))
        })
        .collect()
}

impl Loader<'_> {
    /// A URL target's `password_env = "NAME"` or `password_file = "PATH"`:
    /// the password read from there (a file's first line), so that the
    /// study file (kept with the results) holds none.
    fn password(&self, t: &RawTarget, target: &mut Target, f: &dyn Fn(&str) -> String) -> R<()> {
        let (from, key) = match (&t.password_env, &t.password_file) {
            (Some(_), Some(p)) => {
                return Err(self.src.at(
                    p,
                    &f("password_file"),
                    "password_env and password_file exclude each other: give one of them",
                ))
            }
            (Some(e), None) => (e, "password_env"),
            (None, Some(p)) => (p, "password_file"),
            (None, None) => return Ok(()),
        };
        let password = if key == "password_env" {
            std::env::var(from.get_ref()).map_err(|_| {
                self.src.at(from, &f(key), format!("the environment variable {} is not set: export it before running the study", from.get_ref()))
            })?
        } else {
            let text = std::fs::read_to_string(from.get_ref()).map_err(|e| {
                self.src.at(
                    from,
                    &f(key),
                    format!("cannot read the password file {}: {e}", from.get_ref()),
                )
            })?;
            text.lines().next().unwrap_or("").to_string()
        };
        match &mut target.kind {
            UrlKind::Postgres(a) | UrlKind::Mysql(a) => {
                a.password = Some(password);
                Ok(())
            }
            _ => Err(self.src.at(
                from,
                &f(key),
                "a password applies to PostgreSQL and MySQL targets",
            )),
        }
    }

    /// Every `[[target]]` (or the default temporary SQLite database), with
    /// unique names and the study's `cpus` handed to managed ones.
    pub(super) fn targets(&self, raw: &RawStudy, out: &Path) -> R<Vec<TargetSpec>> {
        let study_nodes = self.nodes_spec(raw.nodes.as_ref(), raw.launcher.as_ref(), "")?;
        if raw.targets.is_empty() {
            if let Some(c) = &raw.cpus {
                return Err(self.src.at(c, "cpus", "CPU sets pin managed servers, and this study has none (the default target is a temporary SQLite database); add a [[target]] with server = \"mariadb\" or \"postgres\""));
            }
            return Ok(vec![TargetSpec {
                name: "sqlite".into(),
                kind: TargetKind::Sqlite(None),
                cpus: vec![None],
                nodes: study_nodes,
            }]);
        }
        let any_managed = raw.targets.iter().any(|t| t.get_ref().server.is_some());
        let study_cpus = match &raw.cpus {
            Some(c) if !any_managed => {
                return Err(self.src.at(c, "cpus", "CPU sets pin managed servers, and this study has no [[target]] with server = \"mariadb\" or \"postgres\""));
            }
            Some(c) => Some(self.cpu_sets(c, "cpus")?),
            None => None,
        };
        let mut targets: Vec<TargetSpec> = Vec::new();
        for (i, t) in raw.targets.iter().enumerate() {
            let field = format!("target[{i}]");
            let mut spec = self.target(t, &field, out, study_cpus.as_ref())?;
            let r = t.get_ref();
            spec.nodes = self
                .nodes_spec(r.nodes.as_ref(), r.launcher.as_ref(), &format!("{field}."))?
                .over(study_nodes);
            if let Some(j) = targets.iter().position(|o| o.name == spec.name) {
                let msg = format!("the name '{}' is already used by target[{j}]; give each target a distinct name = \"…\"", spec.name);
                return Err(match &t.get_ref().name {
                    Some(n) => self.src.at(n, &format!("{field}.name"), msg),
                    None => self.src.at(t, &field, msg),
                });
            }
            targets.push(spec);
        }
        Ok(targets)
    }

    /// One `[[target]]`: exactly one kind, only the keys that kind takes,
    /// a parsed URL, existing paths, CPU sets that exist.
    pub(super) fn target(
        &self,
        st: &Spanned<RawTarget>,
        field: &str,
        out: &Path,
        study_cpus: Option<&Vec<Option<Vec<usize>>>>,
    ) -> R<TargetSpec> {
        let t = st.get_ref();
        let f = |key: &str| format!("{field}.{key}");
        let given = [t.url.is_some(), t.server.is_some(), t.sqlite.is_some()];
        match given.iter().filter(|g| **g).count() {
            0 => return Err(self.src.at(st, field, "a target needs one of url = \"postgres://…\" (an existing database), server = \"mariadb\" or \"postgres\" (a server dbsweep starts), or sqlite = \"PATH\" or true")),
            1 => {}
            _ => return Err(self.src.at(st, field, "url, server and sqlite exclude each other: give one of them")),
        }
        let ps_mode = match t.ps_mode.as_ref().map(|p| *p.get_ref()) {
            Some(PsModeName::Disable) => PsMode::Disable,
            _ => PsMode::Prepared,
        };
        if t.server.is_none() {
            // What only a managed server has.
            let why = if t.url.is_some() {
                "an existing database (url) runs as it is"
            } else {
                "an SQLite target runs as it is"
            };
            let managed_only = [
                ("settings", t.settings.as_ref().map(|s| s.span())),
                ("binaries", t.binaries.as_ref().map(|s| s.span())),
                ("version", t.version.as_ref().map(|s| s.span())),
                ("config_file", t.config_file.as_ref().map(|s| s.span())),
                ("tls", t.tls.as_ref().map(|s| s.span())),
                ("pooler", t.pooler.as_ref().map(|s| s.span())),
                (
                    "pooler_settings",
                    t.pooler_settings.as_ref().map(|s| s.span()),
                ),
                ("dir", t.dir.as_ref().map(|s| s.span())),
                ("cpus", t.cpus.as_ref().map(|s| s.span())),
            ];
            for (key, span) in managed_only {
                if let Some(span) = span {
                    return Err(self.src.error(Some(span), &f(key), format!("{key} applies only to a managed server (server = \"mariadb\" or \"postgres\"); {why}")));
                }
            }
        }
        if t.url.is_none() {
            if let Some(p) = t.password_env.as_ref().or(t.password_file.as_ref()) {
                let key = if t.password_env.is_some() {
                    "password_env"
                } else {
                    "password_file"
                };
                return Err(self.src.at(p, &f(key), format!("{key} applies to a url target (an existing server); a managed server's password is dbsweep's own")));
            }
        }
        let (derived, mut kind) = if let Some(u) = &t.url {
            let mut target =
                Target::parse(u.get_ref()).map_err(|m| self.src.at(u, &f("url"), m))?;
            if ps_mode == PsMode::Disable {
                target.set_ps_mode(PsMode::Disable);
            }
            self.password(t, &mut target, &f)?;
            let derived = url_kind_name(&target.kind);
            (derived.to_string(), TargetKind::Url(target))
        } else if let Some(s) = &t.sqlite {
            if let Some(p) = &t.ps_mode {
                return Err(self.src.at(
                    p,
                    &f("ps_mode"),
                    "ps_mode applies to PostgreSQL and MySQL targets",
                ));
            }
            let path = match s.get_ref() {
                SqliteSpec::Temporary => None,
                SqliteSpec::Path(p) => Some(PathBuf::from(p)),
            };
            ("sqlite".to_string(), TargetKind::Sqlite(path))
        } else {
            let s = t.server.as_ref().expect("one of the three is given");
            let kind: ServerKind = s
                .get_ref()
                .parse()
                .map_err(|e: crate::server::ServerError| self.src.at(s, &f("server"), e))?;
            (
                kind.name().to_string(),
                TargetKind::Managed(self.managed(t, kind, field, ps_mode)?),
            )
        };
        let name = match &t.name {
            Some(n) => {
                check_file_name(n.get_ref()).map_err(|m| self.src.at(n, &f("name"), m))?;
                n.get_ref().clone()
            }
            None => default_name(&derived, t),
        };
        let mut cpus = vec![None];
        if let TargetKind::Managed(m) = &mut kind {
            if m.dir.as_os_str().is_empty() {
                m.dir = out.join("servers").join(&name);
                m.dir_is_default = true;
            }
            if let Some(c) = &t.cpus {
                cpus = self.cpu_sets(c, &f("cpus"))?;
            } else if let Some(c) = study_cpus {
                cpus = c.clone();
            }
        }
        Ok(TargetSpec {
            name,
            kind,
            cpus,
            nodes: NodesSpec::default(),
        })
    }

    /// A managed target's server part; `dir` is left empty when not given
    /// (the caller fills in the default, which needs the target's name).
    pub(super) fn managed(
        &self,
        t: &RawTarget,
        kind: ServerKind,
        field: &str,
        ps_mode: PsMode,
    ) -> R<ManagedServer> {
        let settings = match &t.settings {
            Some(s) => self.settings(s.get_ref(), &format!("{field}.settings"), Some(kind))?,
            None => Vec::new(),
        };
        let config_file = match &t.config_file {
            Some(c) => {
                let p = PathBuf::from(c.get_ref());
                if !p.is_file() {
                    return Err(self.src.at(c, &format!("{field}.config_file"), format!("'{}' is not a file (relative paths start from the directory dbsweep runs in)", p.display())));
                }
                Some(p)
            }
            None => None,
        };
        let binaries = match &t.binaries {
            Some(b) => {
                let p = PathBuf::from(b.get_ref());
                if !p.is_dir() {
                    return Err(self.src.at(b, &format!("{field}.binaries"), format!("'{}' is not a directory: give the directory holding the server's programs (e.g. /usr/lib/postgresql/16/bin)", p.display())));
                }
                Some(p)
            }
            None => None,
        };
        let version = match &t.version {
            Some(v) if t.binaries.is_some() => {
                return Err(self.src.at(v, &format!("{field}.version"), "version and binaries exclude each other: give the version of a build from the registry (`dbsweep server install`), or the directory of another build's programs"));
            }
            Some(v) => {
                crate::server::install::parse_wanted(kind, v.get_ref())
                    .map_err(|e| self.src.at(v, &format!("{field}.version"), e))?;
                Some(v.get_ref().clone())
            }
            None => None,
        };
        Ok(ManagedServer {
            kind,
            dir: t
                .dir
                .as_ref()
                .map(|d| PathBuf::from(d.get_ref()))
                .unwrap_or_default(),
            dir_is_default: false,
            settings,
            config_file,
            binaries,
            version,
            ps_mode,
            tls: t.tls.as_ref().is_some_and(|t| *t.get_ref()),
            pooler: self.pooler(t, kind, field)?,
        })
    }

    /// `pooler = "pgbouncer"` and its `pooler_settings`: PgBouncer in front
    /// of a managed PostgreSQL.
    fn pooler(&self, t: &RawTarget, kind: ServerKind, field: &str) -> R<Option<PoolerSpec>> {
        let Some(name) = &t.pooler else {
            if let Some(s) = &t.pooler_settings {
                return Err(self.src.at(
                    s,
                    &format!("{field}.pooler_settings"),
                    "pooler_settings needs a pooler: add pooler = \"pgbouncer\"",
                ));
            }
            return Ok(None);
        };
        let key = format!("{field}.pooler");
        if name.get_ref() != "pgbouncer" {
            return Err(self.src.at(
                name,
                &key,
                format!(
                    "unknown pooler '{}': the pooler dbsweep starts is \"pgbouncer\"",
                    name.get_ref()
                ),
            ));
        }
        if kind != ServerKind::Postgres {
            return Err(self.src.at(name, &key, format!("PgBouncer goes in front of PostgreSQL, not {kind}: use server = \"postgres\" or leave the pooler out")));
        }
        let mut spec = PoolerSpec::default();
        if let Some(s) = &t.pooler_settings {
            spec.settings = s
                .get_ref()
                .0
                .iter()
                .map(|(k, v)| (k.get_ref().clone(), v.get_ref().0.clone()))
                .collect();
            spec.check()
                .map_err(|e| self.src.at(s, &format!("{field}.pooler_settings"), e))?;
        }
        Ok(Some(spec))
    }

    /// Validated `name = value` settings. `kind` is known for a target's own
    /// settings; a variant's are checked for each target it applies to.
    pub(super) fn settings(
        &self,
        s: &Ordered<SettingValue>,
        field: &str,
        kind: Option<ServerKind>,
    ) -> R<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in &s.0 {
            self.setting(k, v.get_ref().0.as_str(), v.span(), field, kind)?;
            if let Some((prev, _)) = out
                .iter()
                .find(|(n, _)| setting_key(kind, n) == setting_key(kind, k.get_ref()))
            {
                return Err(self.src.at(
                    k,
                    field,
                    format!("'{}' is set twice (also as '{prev}')", k.get_ref()),
                ));
            }
            out.push((k.get_ref().clone(), v.get_ref().0.clone()));
        }
        Ok(out)
    }

    /// One setting: a name a config file can hold, a value without line
    /// breaks, and for PostgreSQL a value at all.
    pub(super) fn setting(
        &self,
        k: &Spanned<String>,
        value: &str,
        vspan: std::ops::Range<usize>,
        field: &str,
        kind: Option<ServerKind>,
    ) -> R<()> {
        let name = k.get_ref();
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok {
            return Err(self.src.at(k, field, format!("bad setting name '{name}': use letters, digits, '_', '-' or '.', e.g. max_connections = 500")));
        }
        if value.chars().any(char::is_control) {
            return Err(self.src.error(
                Some(vspan),
                field,
                format!("the value of '{name}' contains a line break or control character"),
            ));
        }
        if kind == Some(ServerKind::Postgres) && value.is_empty() {
            return Err(self.src.error(Some(vspan), field, format!("'{name}' has an empty value: PostgreSQL settings need one, e.g. work_mem = \"64MB\"")));
        }
        Ok(())
    }

    /// A `cpus` list: non-empty, CPUs this process may use, no set twice.
    pub(super) fn cpu_sets(
        &self,
        c: &Spanned<Vec<Spanned<CpuSet>>>,
        field: &str,
    ) -> R<Vec<Option<Vec<usize>>>> {
        if c.get_ref().is_empty() {
            return Err(self.src.at(c, field, "an empty list: give CPU sets such as [[0], [0, 1]], or leave cpus out for no pinning"));
        }
        let mut sets: Vec<Option<Vec<usize>>> = Vec::new();
        for (i, set) in c.get_ref().iter().enumerate() {
            let cpus = &set.get_ref().0;
            let f = format!("{field}[{i}]");
            if let Some(missing) = cpus.iter().find(|c| !self.cpus.contains(c)) {
                return Err(self.src.at(
                    set,
                    &f,
                    format!(
                        "CPU {missing} is not available on this machine (available: {})",
                        crate::server::format_cpu_list(&self.cpus)
                    ),
                ));
            }
            if let Some(j) = sets.iter().position(|s| s.as_ref() == Some(cpus)) {
                return Err(self
                    .src
                    .at(set, &f, format!("the same CPU set as {field}[{j}]")));
            }
            sets.push(Some(cpus.clone()));
        }
        Ok(sets)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_stored_files_targets_are_named_in_its_order_as_the_loader_names_them() {
        let text = r#"
name = "t"
clients = [1]
[[target]]
server = "postgres"
version = "9.6"
[[target]]
server = "mariadb"
[[target]]
name = "mine"
url = "postgres://u@127.0.0.1/db"
[[target]]
url = "mysql://u@127.0.0.1/db"
[[workload]]
name = "oltp_point_select"
"#;
        let names = super::stored_target_names(text).unwrap();
        let loaded = crate::study::load_str(text, Path::new("t.toml")).unwrap();
        let theirs: Vec<String> = loaded.targets.iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, theirs);
        assert_eq!(names, ["postgres-9.6", "mariadb", "mine", "mysql"]);
        assert_eq!(super::stored_target_names("name = ["), None);
    }
}
