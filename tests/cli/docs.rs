#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

//! Shell completions and the man page, generated from the flags.

use assert_cmd::Command;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

#[test]
fn bash_completion_is_a_valid_script_that_knows_the_commands() {
    let out = scalescope().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    for word in ["sweep", "topo", "place", "--placement", "complete -F"] {
        assert!(script.contains(word), "no `{word}` in the bash completion");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scalescope.bash");
    std::fs::write(&path, &script).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n rejects the completion script");
}

#[test]
fn other_shells_and_bad_shells() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = scalescope().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
    let out = scalescope().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

#[test]
fn the_man_page_is_roff_with_every_command() {
    let out = scalescope().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH scalescope 1"));
    for cmd in [
        "topo", "place", "sweep", "analyze", "report", "compare", "mem",
    ] {
        assert!(page.contains(cmd), "no `{cmd}` in the man page");
    }
}
