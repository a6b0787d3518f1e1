//! The command line described from clap's own model of it (`scalescope
//! __inventory`): what the attack harness (`tests/cli/attack`) enumerates, so a
//! new flag is attacked as soon as it exists. No I/O.

use clap::CommandFactory;

use super::Cli;

/// One JSON object per argument of every command: its command path, its name
/// (`--x` or the positional's id), whether it takes a value, the value's type
/// (`number` with the type's largest value, `path`, `choice` or `text`) and
/// whether it is required (inventory schema 1, docs/json.md).
pub fn arguments() -> Vec<serde_json::Value> {
    let mut lines = Vec::new();
    walk(&Cli::command(), &mut Vec::new(), &mut lines);
    lines
}

fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<serde_json::Value>) {
    let subs: Vec<&clap::Command> = cmd.get_subcommands().collect();
    if !path.is_empty() {
        for arg in cmd.get_arguments() {
            out.push(describe(path, arg, !subs.is_empty()));
        }
    }
    for sub in subs {
        path.push(sub.get_name().to_string());
        walk(sub, path, out);
        path.pop();
    }
}

fn describe(path: &[String], arg: &clap::Arg, has_subcommands: bool) -> serde_json::Value {
    use std::any::TypeId;
    let t = arg.get_value_parser().type_id();
    let max = || -> Option<String> {
        let maxes: [(TypeId, String); 10] = [
            (TypeId::of::<u8>(), u8::MAX.to_string()),
            (TypeId::of::<u16>(), u16::MAX.to_string()),
            (TypeId::of::<u32>(), u32::MAX.to_string()),
            (TypeId::of::<u64>(), u64::MAX.to_string()),
            (TypeId::of::<usize>(), usize::MAX.to_string()),
            (TypeId::of::<i32>(), i32::MAX.to_string()),
            (TypeId::of::<i64>(), i64::MAX.to_string()),
            (TypeId::of::<f32>(), f32::MAX.to_string()),
            (TypeId::of::<f64>(), format!("{:e}", f64::MAX)),
            (TypeId::of::<isize>(), isize::MAX.to_string()),
        ];
        maxes.into_iter().find(|(k, _)| t == *k).map(|(_, v)| v)
    };
    let takes_value = arg.get_action().takes_values();
    // A typed number with its own range (`Count<MIN, MAX>`, `Secs<..>`, `Bytes`)
    // is known by what its parser takes: `1` but not `x`; it is attacked with the
    // largest value of the type beneath it.
    let max = || max().or_else(|| ranged_max(arg));
    let kind = match max() {
        Some(_) => "number",
        None if t == TypeId::of::<std::path::PathBuf>() => "path",
        None if !arg.get_possible_values().is_empty() => "choice",
        None => "text",
    };
    serde_json::json!({
        "schema_version": 1,
        "command": path,
        "name": arg.get_long().map(|l| format!("--{l}")).unwrap_or_else(|| arg.get_id().to_string()),
        "positional": arg.is_positional(),
        "takes_value": takes_value,
        "kind": kind,
        "max": max().unwrap_or_else(|| u64::MAX.to_string()),
        "required": arg.is_required_set(),
        "global": arg.is_global_set(),
        "group_command": has_subcommands,
    })
}

/// The value a ranged number is attacked with: `u64::MAX` when its parser takes
/// whole numbers, `f64::MAX` when it takes only fractions; `None` for anything
/// that is not a number (it refuses `1` or takes `x`).
fn ranged_max(arg: &clap::Arg) -> Option<String> {
    if !arg.get_action().takes_values() || !arg.get_possible_values().is_empty() {
        return None;
    }
    let probe = clap::Command::new("probe").arg(
        clap::Arg::new("v")
            .long("v")
            .value_parser(arg.get_value_parser().clone()),
    );
    let takes = |v: &str| {
        probe
            .clone()
            .try_get_matches_from(["probe", "--v", v])
            .is_ok()
    };
    if takes("x") || takes("none-of-these") {
        return None;
    }
    match (takes("1"), takes("0.5")) {
        (true, _) => Some(u64::MAX.to_string()),
        (false, true) => Some(format!("{:e}", f64::MAX)),
        _ => None,
    }
}
