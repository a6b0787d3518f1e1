//! `sweep --param key=value` read by the very definitions that give the kernel
//! commands their flags: every workload's settings struct derives clap's `Args`
//! (flags, help, value parsers and the one set of defaults), and [`parse`] turns
//! each `key=value` into `--key=value` (or a positional value) for that struct, so a
//! parameter and a flag are one parser with one default. Errors name the parameter
//! as a [`Setting::Param`], never a flag.

use std::collections::BTreeMap;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, Args, Command, FromArgMatches};
use scalescope_model::setting::Setting;

use crate::WorkloadError;

/// The names a parameter key may take for `arg`: its long flag, or its id (the
/// field's name, as a positional argument is known).
fn names(arg: &Arg) -> [Option<&str>; 2] {
    [arg.get_long(), Some(arg.get_id().as_str())]
}

/// Every key `cmd` takes, as a sentence lists them.
fn keys(cmd: &Command) -> String {
    let keys: Vec<&str> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().or(Some(a.get_id().as_str())))
        .filter(|k| *k != "help")
        .collect();
    keys.join(", ")
}

/// The error of one value, in the library's words: the value parser's own
/// sentence, or the values it would have taken.
fn value_error(key: &str, value: &str, e: &clap::Error) -> WorkloadError {
    let detail = match e.kind() {
        ErrorKind::ValueValidation => match std::error::Error::source(e) {
            Some(source) => source.to_string(),
            None => format!("`{value}` is not valid"),
        },
        ErrorKind::InvalidValue => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) => {
                format!("`{value}` is not one of {}", valid.join(", "))
            }
            _ => format!("`{value}` is not valid"),
        },
        kind => format!("`{value}`: {}", kind.as_str().unwrap_or("not valid")),
    };
    WorkloadError::BadParam {
        setting: Setting::param(key),
        detail,
    }
}

/// The settings `S` of `workload` from `key=value` parameters, each key a flag of
/// `S` (or the name of its positional argument), defaults where none is given.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming the parameter: an unknown key (with the keys
/// `S` takes), or a value its parser refuses (with the parser's reason).
pub fn parse<S: Args + FromArgMatches>(
    workload: &str,
    params: &BTreeMap<String, String>,
) -> Result<S, WorkloadError> {
    let mut cmd = S::augment_args(Command::new("param").no_binary_name(true));
    let (mut flags, mut positional) = (Vec::new(), Vec::new());
    for (key, value) in params {
        let Some(arg) = cmd
            .get_arguments()
            .find(|a| names(a).contains(&Some(key.as_str())))
        else {
            return Err(WorkloadError::param(
                key,
                format!("unknown ({workload} takes {})", keys(&cmd)),
            ));
        };
        let one = match arg.get_long() {
            Some(long) => vec![format!("--{long}={value}")],
            None => vec!["--".to_string(), value.clone()],
        };
        match arg.get_long() {
            Some(_) => flags.extend(one.iter().cloned()),
            None => positional.push((arg.get_index(), value.clone())),
        }
        // Each value is parsed on its own first, so its error names its key.
        cmd.clone()
            .try_get_matches_from(one)
            .map_err(|e| value_error(key, value, &e))?;
    }
    positional.sort();
    let argv = flags
        .into_iter()
        .chain((!positional.is_empty()).then(|| "--".to_string()))
        .chain(positional.into_iter().map(|(_, v)| v));
    let whole = |e: clap::Error| {
        let key = params.keys().next().map_or("", String::as_str);
        WorkloadError::param(key, e.kind().as_str().unwrap_or("not valid").to_string())
    };
    let matches = cmd.try_get_matches_from_mut(argv).map_err(whole)?;
    S::from_arg_matches(&matches).map_err(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Args, PartialEq)]
    struct Example {
        /// A count.
        #[arg(long, default_value_t = 3)]
        count: u8,
        #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
        force: bool,
        #[arg(default_value = "q1", value_parser = ["q1", "q6"])]
        query: String,
    }

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn keys_become_flags_and_positionals_with_the_structs_defaults() {
        let e: Example = parse("example", &params(&[])).unwrap();
        assert_eq!((e.count, e.force, e.query.as_str()), (3, false, "q1"));
        let e: Example = parse(
            "example",
            &params(&[("count", "7"), ("force", "true"), ("query", "q6")]),
        )
        .unwrap();
        assert_eq!((e.count, e.force, e.query.as_str()), (7, true, "q6"));
    }

    #[test]
    fn errors_name_the_parameter_and_never_a_flag() {
        for (pairs, want) in [
            (
                vec![("size", "1")],
                "workload parameter `size`: unknown (example takes count, force, query)",
            ),
            (
                vec![("count", "300")],
                "workload parameter `count`: 300 is not in 0..=255",
            ),
            (
                vec![("query", "q9")],
                "workload parameter `query`: `q9` is not one of q1, q6",
            ),
            (
                vec![("force", "yes")],
                "workload parameter `force`: `yes` is not one of true, false",
            ),
        ] {
            let e = parse::<Example>("example", &params(&pairs))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{e}");
            assert!(!e.contains("--"), "{e}");
        }
    }
}
