//! `scalescope report` as a person sees it: the page opened in headless Chromium
//! (Debian's), screenshotted, and the charts' series colours found painted; the DOM
//! holds the SVG charts and no markup smuggled in through the results.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command as StdCommand;

use assert_cmd::Command;
use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::plan::Plan;
use scalescope_model::store::{CommandSpec, Header, ResultsStore, RunRecord, RunStatus};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Source;

/// A sweep recorded on a 2 x 24 x 2 machine, with a hostile command line and host name.
fn write_results(dir: &Path) {
    let topo = Source::Synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last".into())
        .load()
        .unwrap();
    let mut machine = Fingerprint::read(Path::new("/nonexistent"), &topo);
    machine.hostname = "<img src=x onerror=alert(2)>".into();
    let header = Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec![
                "./mine".into(),
                "</script><script>document.body.innerHTML='pwned'</script>".into(),
            ],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: vec![],
        },
        plan: Plan {
            launch: None,
            threads: vec![1, 8, 16, 24, 32, 40, 48, 64, 80, 96],
            placements: vec![Strategy::CoresFirst, Strategy::SmtPairs, Strategy::Scatter],
            mems: vec![MemPolicy::FirstTouch],
            reps: 3,
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        timeout_secs: None,
        kill_grace_secs: None,
        machine,
    };
    let mut store = ResultsStore::create(dir, &header).unwrap();
    for point in header.plan.points() {
        let p = point.threads as f64;
        let s = match point.placement {
            Strategy::Scatter => {
                if p <= 48.0 {
                    0.9 * p
                } else {
                    43.2 + 0.05 * (p - 48.0)
                }
            }
            Strategy::SmtPairs => {
                if p == 1.0 {
                    1.0
                } else {
                    0.625 * p.min(48.0) + 0.27 * (p - 48.0).max(0.0)
                }
            }
            _ => {
                if p <= 24.0 {
                    p
                } else if p <= 48.0 {
                    24.0 + 0.7 * (p - 24.0)
                } else {
                    40.8 + 0.05 * (p - 48.0)
                }
            }
        };
        for rep in 0..3 {
            store
                .append(&RunRecord {
                    ranks: None,
                    node_evidence: Vec::new(),
                    point: point.clone(),
                    rep,
                    warmup: false,
                    thread_cpus: vec![],
                    started_unix_secs: 0.0,
                    wall_secs: 100.0 / s * (1.0 + 0.004 * rep as f64),
                    user_secs: None,
                    sys_secs: None,
                    max_rss_bytes: None,
                    status: RunStatus::Ok,
                    exit_code: Some(0),
                    signal: None,
                    error: None,
                    metrics: BTreeMap::new(),
                    placement_check: None,
                    evidence: None,
                    setup: None,
                    stdout_log: None,
                    stderr_log: None,
                })
                .unwrap();
        }
    }
}

fn chromium(args: &[&str], profile: &Path) -> std::process::Output {
    StdCommand::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium missing: run scripts/install-test-deps.sh (Debian package chromium)")
}

/// Pixels within a small distance of `rgb`.
fn count_colour(png_path: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| (0..3).all(|i| (px[i] as i32 - rgb[i] as i32).abs() <= 24))
        .count()
}

#[test]
fn the_report_renders_its_charts_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    write_results(&results);
    let out = dir.path().join("report");
    Command::cargo_bin("scalescope")
        .unwrap()
        .args(["report"])
        .arg(results.join("results.jsonl"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    for f in [
        "index.html",
        "speedup.svg",
        "efficiency.svg",
        "time.svg",
        "topology.svg",
        "curves.csv",
        "analysis.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    if let Ok(keep) = std::env::var("SCALESCOPE_KEEP_SCREENSHOTS") {
        std::fs::write(Path::new(&keep).join("index.html"), &html).unwrap();
    }
    assert!(
        html.contains("scaling slows after 24 threads: from 25 threads, package #2 is in use"),
        "finding missing"
    );
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "unescaped markup in the page"
    );
    let url = format!("file://{}", out.join("index.html").display());
    let profile = dir.path().join("profile");
    let dom = chromium(&["--dump-dom", &url], &profile);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.matches("<svg").count() >= 4,
        "charts missing from the DOM"
    );
    // The hostile command line is shown as text; it never became an element.
    assert!(
        dom.contains("scalescope report: why does it stop scaling?"),
        "the page was replaced"
    );
    assert!(
        !dom.contains("<script") && !dom.contains("<img"),
        "injected markup became elements"
    );
    assert!(
        dom.contains("&lt;/script&gt;&lt;script&gt;document.body.innerHTML='pwned'&lt;/script&gt;")
    );
    // The answer comes first: the summary names the diagnosis before any section. It
    // is the finding that costs the most speedup: scatter's knee at 48 (about 0.94 of
    // speedup per thread lost over the 48 threads after it), not the first knee (24).
    let summary_at = dom.find(r#"id="summary""#).expect("no summary section");
    let first_section = dom.find(r#"id="w1""#).expect("no workload section");
    let diagnosis_at = dom
        .find("Scatter / first-touch: scaling slows after 48 threads: from 49 threads, two threads share a physical core")
        .expect("no diagnosis");
    assert!(summary_at < diagnosis_at && diagnosis_at < first_section);
    // Every placement's topology regions and knees are drawn, in its own lane.
    let summary = &dom[summary_at..first_section];
    for k in 0..3 {
        assert!(
            summary.contains(&format!(r#"class="band s{k}""#)),
            "placement {k}'s regions are missing from the leading chart"
        );
    }
    assert!(summary.contains(r#"class="knee s0""#), "knee not marked");
    first_screen_shows_the_answer(&url, dir.path(), &profile);
    let shot = dir.path().join("shot.png");
    let o = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,4000",
            &url,
        ],
        &profile,
    );
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The two series colours (Okabe-Ito blue and vermillion) are really painted.
    let blue = count_colour(&shot, [0x00, 0x72, 0xB2]);
    a_cleared_checkbox_hides_its_series(&html, dir.path(), &profile, blue);
    let vermillion = count_colour(&shot, [0xD5, 0x5E, 0x00]);
    assert!(
        blue > 500 && vermillion > 500,
        "series pixels: blue {blue}, vermillion {vermillion}"
    );
}

/// Pixels of `rgb` at `alpha` over white (a tinted region), within a small distance.
fn tint(rgb: [u8; 3], alpha: f64) -> [u8; 3] {
    rgb.map(|c| (255.0 - (255.0 - c as f64) * alpha).round() as u8)
}

/// The first 1280x800 screen: the diagnosis box, the leading chart's three series
/// and each placement's tinted region lane are painted.
fn first_screen_shows_the_answer(url: &str, dir: &Path, profile: &Path) {
    let shot = dir.join("first-screen.png");
    let o = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,800",
            url,
        ],
        profile,
    );
    assert!(shot.is_file(), "{}", String::from_utf8_lossy(&o.stderr));
    if let Ok(keep) = std::env::var("SCALESCOPE_KEEP_SCREENSHOTS") {
        std::fs::copy(&shot, Path::new(&keep).join("first-screen.png")).unwrap();
    }
    let diag_box = count_colour(&shot, [0xff, 0xf7, 0xec]);
    assert!(
        diag_box > 20_000,
        "diagnosis box not on the first screen: {diag_box} px"
    );
    let palette = [[0x00, 0x72, 0xB2], [0xD5, 0x5E, 0x00], [0x00, 0x9E, 0x73]];
    for (k, rgb) in palette.iter().enumerate() {
        let line = count_colour(&shot, *rgb);
        assert!(line > 150, "series {k} not on the first screen: {line} px");
        let lane = count_colour(&shot, tint(*rgb, 0.22));
        assert!(lane > 300, "placement {k}'s regions not painted: {lane} px");
    }
}

/// The series toggles are CSS only: the same page with the first placement's
/// checkbox cleared paints thousands fewer pixels of its colour (its lines, regions
/// and knees leave the section's charts; the summary chart, headings and cards that
/// share the blue stay).
fn a_cleared_checkbox_hides_its_series(html: &str, dir: &Path, profile: &Path, blue: usize) {
    let unchecked = html.replacen(r#"id="w1-s0" checked"#, r#"id="w1-s0""#, 1);
    assert_ne!(unchecked, html, "no checkbox for the first placement");
    let page = dir.join("unchecked.html");
    std::fs::write(&page, unchecked).unwrap();
    let shot = dir.join("unchecked.png");
    chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,4000",
            &format!("file://{}", page.display()),
        ],
        profile,
    );
    let hidden = count_colour(&shot, [0x00, 0x72, 0xB2]);
    assert!(
        hidden + 2000 < blue,
        "clearing the checkbox left {hidden} of {blue} blue pixels"
    );
}
