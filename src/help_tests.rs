//! The command tree's help, walked: every option and argument of every visible
//! command has a description, and no command shows an option that belongs to
//! another (PageRank's `--sync` under `graph bfs`).

use clap::CommandFactory;

use crate::cli::Cli;

/// Every visible command below `cmd`, with its path (`graph bfs`).
fn commands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let p = format!("{path} {}", sub.get_name()).trim().to_string();
        out.push((p.clone(), sub.clone()));
        commands(sub, &p, out);
    }
}

fn all() -> Vec<(String, clap::Command)> {
    let mut root = Cli::command();
    root.build();
    let mut out = vec![("scalescope".to_string(), root.clone())];
    commands(&root, "", &mut out);
    out
}

#[test]
fn every_option_has_a_description() {
    let mut missing = Vec::new();
    for (path, cmd) in all() {
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let described = arg
                .get_help()
                .or(arg.get_long_help())
                .is_some_and(|h| !h.to_string().trim().is_empty());
            if !described {
                missing.push(format!("{path}: {id}"));
            }
        }
        if cmd.get_about().is_none() && path != "scalescope" {
            missing.push(format!("{path}: (no about)"));
        }
    }
    assert!(missing.is_empty(), "without a description: {missing:#?}");
}

/// Each command's own options: a command's help never qualifies an option with
/// the name of a sibling command ("PageRank: ..." under `bfs`).
#[test]
fn no_command_shows_another_commands_options() {
    let names = |c: &str| -> Vec<String> {
        match c {
            "pr" => vec!["pagerank".into(), "pr".into()],
            "bfs" => vec!["bfs".into()],
            other => vec![other.to_string()],
        }
    };
    let mut leaks = Vec::new();
    for (path, cmd) in all() {
        let siblings: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().into()).collect();
        for sub in cmd.get_subcommands() {
            let others: Vec<String> = siblings
                .iter()
                .filter(|s| *s != sub.get_name())
                .flat_map(|s| names(s))
                .collect();
            for arg in sub.get_arguments() {
                let help = arg
                    .get_help()
                    .map(|h| h.to_string().to_lowercase())
                    .unwrap_or_default();
                if let Some(o) = others.iter().find(|o| help.starts_with(&format!("{o}:"))) {
                    leaks.push(format!(
                        "{path} {}: --{} is {o}'s",
                        sub.get_name(),
                        arg.get_id()
                    ));
                }
            }
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    let bfs = all()
        .into_iter()
        .find(|(p, _)| p == "graph bfs")
        .map(|(_, c)| c)
        .expect("graph bfs");
    for pr_only in ["sync", "batch", "tolerance"] {
        assert!(
            bfs.get_arguments().all(|a| a.get_id() != pr_only),
            "graph bfs offers --{pr_only}"
        );
    }
}

/// `sweep --workload` names every built-in workload, not one example.
#[test]
fn sweep_workload_help_lists_every_workload() {
    let sweep = all()
        .into_iter()
        .find(|(p, _)| p == "sweep")
        .map(|(_, c)| c)
        .expect("sweep");
    let help = sweep
        .get_arguments()
        .find(|a| a.get_id() == "workload")
        .and_then(|a| a.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    for w in scalescope_workloads::AVAILABLE.split(", ") {
        assert!(help.contains(w), "--workload help lacks {w}: {help}");
    }
}
