//! `ssdlab sweep | search | report` hand over to the Python package; without
//! it they exit 2 and say how to install it.

use std::process::Command;

fn ssdlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssdlab"))
}

#[test]
fn python_doors_without_the_package_exit_2_with_install_hint() {
    for sub in ["sweep", "search", "report"] {
        let out = ssdlab()
            .args([sub, "whatever.toml"])
            .env("SSDLAB_PYTHON", "/nonexistent/python3")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{sub}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("pip install ."), "{sub}: {err}");
        assert!(err.contains("SSDLAB_PYTHON"), "{sub}: {err}");
    }
}

#[test]
fn python_doors_are_listed_in_help() {
    let out = ssdlab().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["sweep", "search", "report"] {
        assert!(text.contains(sub), "{text}");
    }
}
