//! `ssdlab sweep | search | report`: handed to the Python package
//! (`python3 -m ssdlab <command> ...`), which does the sweeps, the Optuna
//! search and the HTML reports. Without the package, exit 2 saying how to
//! install it.

use std::process::{Command, ExitCode};

/// Arguments passed through unchanged (`--help` included).
#[derive(clap::Args)]
pub struct Args {
    /// Arguments for `python3 -m ssdlab <command>` (see `ssdlab <command> --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

const PROBE: &str = "import ssdlab._core";

fn has_package(python: &str) -> bool {
    Command::new(python)
        .args(["-c", PROBE])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The Python to use: `$SSDLAB_PYTHON`, else `python3`, else `./.venv/bin/python`.
fn find_python() -> Result<String, String> {
    if let Ok(p) = std::env::var("SSDLAB_PYTHON") {
        return if has_package(&p) {
            Ok(p)
        } else {
            Err(format!(
                "SSDLAB_PYTHON={p} cannot import the ssdlab package"
            ))
        };
    }
    for p in ["python3", ".venv/bin/python"] {
        if has_package(p) {
            return Ok(p.to_string());
        }
    }
    Err("the ssdlab Python package is not installed for python3".into())
}

/// Run `python -m ssdlab <sub> <args>`; replaces this process on Unix.
pub fn run(sub: &str, args: &[String]) -> ExitCode {
    let python = match find_python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!(
                "error: `ssdlab {sub}` needs the ssdlab Python package: {why}.\n\
                 Install it from the repository root with `pip install .` (or `pip install \".[all]\"` \
                 for Ray, Optuna and Parquet), or point SSDLAB_PYTHON at a Python that has it \
                 (e.g. SSDLAB_PYTHON=.venv/bin/python after `bash scripts/test.sh`)."
            );
            return ExitCode::from(2);
        }
    };
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "ssdlab", sub]).args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        eprintln!("error: cannot run {python}: {e}");
        ExitCode::from(2)
    }
    #[cfg(not(unix))]
    {
        match cmd.status() {
            Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("error: cannot run {python}: {e}");
                ExitCode::from(2)
            }
        }
    }
}
