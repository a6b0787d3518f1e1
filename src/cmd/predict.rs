//! `scalescope predict`: a sweep's results and a target machine in, the predicted
//! curves, recommendation and assumptions out (text, JSON, a report section).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use scalescope_analysis::predict::{self, CalibrateOptions, Prediction, TargetBandwidth};
use scalescope_analysis::Basis;
use scalescope_results::store::read_results;
use scalescope_topo::{Source, Topology};

use crate::cli::{PredictArgs, SourceArgs};

/// `--to MACHINE`: a directory is a recorded sysfs tree, an existing file an hwloc
/// XML export, anything else a synthetic spec.
fn target_source(to: &str) -> Source {
    let p = Path::new(to);
    if p.is_dir() {
        Source::SysfsRoot(p.to_path_buf())
    } else if p.is_file() {
        Source::HwlocXml(p.to_path_buf())
    } else {
        Source::Synthetic(to.to_string())
    }
}

fn target(args: &PredictArgs) -> anyhow::Result<Topology> {
    match &args.to {
        Some(to) => target_source(to)
            .load()
            .with_context(|| format!("loading the target machine `--to {to}`")),
        None if !is_empty(&args.source) => crate::shared::load_topology(&args.source),
        None => anyhow::bail!(
            "name the target machine: --to MACHINE (a synthetic spec, a recorded sysfs tree or an hwloc XML file)"
        ),
    }
}

fn is_empty(s: &SourceArgs) -> bool {
    s.sysfs_root.is_none() && s.hwloc_xml.is_none() && s.synthetic.is_none()
}

fn read_doc(p: &PathBuf) -> anyhow::Result<(String, serde_json::Value)> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    let doc = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))?;
    Ok((p.display().to_string(), doc))
}

fn bandwidth(args: &PredictArgs, topo: &Topology) -> anyhow::Result<TargetBandwidth> {
    if let Some(g) = args.node_gbps {
        anyhow::ensure!(
            g.is_finite() && g > 0.0,
            "--node-gbps {g}: expected a positive bandwidth in GB/s"
        );
        return Ok(TargetBandwidth {
            node_gbps: Some(g),
            source: Some("stated with --node-gbps".into()),
        });
    }
    let docs = args
        .ceilings
        .iter()
        .map(read_doc)
        .collect::<anyhow::Result<Vec<_>>>()?;
    predict::target_bandwidth(topo, &docs).map_err(|e| anyhow::anyhow!("--ceilings {e}"))
}

/// The prediction the arguments ask for.
pub fn prediction(args: &PredictArgs) -> anyhow::Result<Prediction> {
    let (h, r, _) = read_results(&args.from).context("reading the calibration results")?;
    let basis = Basis::parse(args.basis.as_deref(), &h).map_err(|e| anyhow::anyhow!("--{e}"))?;
    let ceilings = scalescope_session::ceilings::discover(&args.from, &args.from_ceilings)?;
    let cal = predict::calibrate(&h, &r, &basis, &ceilings, &CalibrateOptions::default())
        .with_context(|| format!("calibrating the model on {}", args.from.display()))?;
    let topo = target(args)?;
    let bw = bandwidth(args, &topo)?;
    Ok(predict::predict(&cal, &topo, &bw))
}

pub fn run(args: &PredictArgs) -> anyhow::Result<ExitCode> {
    let p = prediction(args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&p)?);
    } else {
        print!("{}", scalescope_report::predict::text(&p));
    }
    if let Some(dir) = &args.out {
        let section = scalescope_report::predict::section(&p, "");
        let index = scalescope_report::dir::write_dir(&[], &[section], dir)?;
        eprintln!("report: {}", index.display());
    }
    Ok(ExitCode::SUCCESS)
}
