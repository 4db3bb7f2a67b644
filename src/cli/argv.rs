//! A command line rendered back into arguments: the options of one clap
//! definition that the user gave, each as the arguments that give it
//! again. `dbsweep k8s` uses it to hand the coordinator Pod exactly the
//! `run` the user asked for, whatever options `run` has: every option of
//! `run`'s definition is read from the matches, so one added to `run`
//! later is carried without a change here.

use clap::parser::ValueSource;
use clap::ArgMatches;

/// One option (or positional) given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// clap's id of the option (`db`, `threads`, `table-size`, …).
    pub id: String,
    /// The arguments that give it: `--long=VALUE` once per value, `--long`
    /// for a flag, the value itself for a positional.
    pub args: Vec<String>,
}

/// The arguments of `def` that `m` holds from the command line (defaults
/// are left out: the same binary applies the same defaults), positionals
/// first, then options in `def`'s order. Values are rendered as
/// `--long=VALUE` so one starting with `-` is never read as an option;
/// an alias comes back under its option's own name.
pub fn given(def: &clap::Command, m: &ArgMatches) -> Vec<Given> {
    let mut positionals = Vec::new();
    let mut options = Vec::new();
    for arg in def.get_arguments() {
        let id = arg.get_id().as_str();
        // An id `m` does not know (another definition's) is not given.
        if !m.try_contains_id(id).unwrap_or(false)
            || m.value_source(id) != Some(ValueSource::CommandLine)
        {
            continue;
        }
        let raw: Vec<String> = m
            .get_raw(id)
            .into_iter()
            .flatten()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if arg.is_positional() {
            positionals.push(Given {
                id: id.to_string(),
                args: raw,
            });
            continue;
        }
        let Some(long) = arg.get_long() else {
            // dbsweep's options all have long names; a short-only one
            // could not be rendered faithfully, so it is not guessed at.
            continue;
        };
        let args = if arg.get_action().takes_values() {
            raw.iter().map(|v| format!("--{long}={v}")).collect()
        } else {
            vec![format!("--{long}")]
        };
        options.push(Given {
            id: id.to_string(),
            args,
        });
    }
    positionals.extend(options);
    positionals
}

#[cfg(test)]
mod tests {
    use clap::{Arg, ArgAction, Command};

    use super::*;

    fn def() -> Command {
        Command::new("run")
            .arg(Arg::new("workload").required(true))
            .arg(Arg::new("time").long("time").default_value("10"))
            .arg(Arg::new("users").long("users").alias("eus"))
            .arg(Arg::new("check").long("check").action(ArgAction::SetTrue))
            .arg(
                Arg::new("skip-trx")
                    .long("skip-trx")
                    .num_args(0..=1)
                    .default_missing_value("on"),
            )
            .arg(
                Arg::new("rand-seed")
                    .long("rand-seed")
                    .allow_negative_numbers(true),
            )
    }

    fn render(args: &[&str]) -> Vec<String> {
        let m = def().get_matches_from(args);
        given(&def(), &m).into_iter().flat_map(|g| g.args).collect()
    }

    #[test]
    fn renders_what_was_given_and_nothing_else() {
        assert_eq!(
            render(&[
                "run",
                "oltp",
                "--eus",
                "100",
                "--check",
                "--skip-trx",
                "--rand-seed=-1"
            ]),
            [
                "oltp",
                "--users=100",
                "--check",
                "--skip-trx=on",
                "--rand-seed=-1"
            ]
        );
        // A default is not rendered, even when given at its value it is:
        // then it is the command line's.
        assert_eq!(render(&["run", "oltp"]), ["oltp"]);
        assert_eq!(
            render(&["run", "oltp", "--time", "10"]),
            ["oltp", "--time=10"]
        );
    }

    #[test]
    fn the_rendering_parses_back_into_the_same_matches() {
        let first = [
            "run",
            "oltp",
            "--time",
            "30",
            "--eus=7",
            "--skip-trx",
            "off",
        ];
        let again = render(&first);
        let mut argv = vec!["run".to_string()];
        argv.extend(again.iter().cloned());
        assert_eq!(
            render(&argv.iter().map(String::as_str).collect::<Vec<_>>()),
            again
        );
        let m = def().get_matches_from(&argv);
        assert_eq!(m.get_one::<String>("time").unwrap(), "30");
        assert_eq!(m.get_one::<String>("skip-trx").unwrap(), "off");
        assert_eq!(m.get_one::<String>("users").unwrap(), "7");
    }
}
