//! promcat as a user meets it: clap's help and version, exit 2 on bad arguments, and its
//! documented exit statuses on a page.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The promcat example, built by the test itself (once per test run) so that no earlier
/// `cargo build --examples` is assumed; a no-op when it is up to date.
pub fn promcat_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| build_example("promcat")).clone()
}

/// Builds the example `name` with the test's profile and target directory.
fn build_example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/it-<hash>
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let target_dir = profile_dir.parent().expect("target dir");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "-p", "promrate", "--example", name, "--target-dir"])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building {name}: {status}");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "{} missing after the build", path.display());
    path
}

#[test]
fn promcat_help_version_and_exit_statuses() {
    let help = Command::new(promcat_binary()).arg("--help").output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    for option in [
        "--selector",
        "--openmetrics",
        "--json",
        "--timeout",
        "[default: 10s]",
        "--version",
    ] {
        assert!(
            text.contains(option),
            "{option} missing from promcat --help:\n{text}"
        );
    }
    let version = Command::new(promcat_binary()).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8(version.stdout).unwrap().trim(),
        format!("promcat {}", env!("CARGO_PKG_VERSION"))
    );
    let bad = Command::new(promcat_binary())
        .args(["--timeout", "later"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let run = |page: &str| promcat_on(&["-", "--selector", r#"up{job="a"}"#], page);
    let good = run("up{job=\"a\"} 1\nup{job=\"b\"} 0\n");
    assert_eq!(good.status.code(), Some(0));
    assert_eq!(String::from_utf8(good.stdout).unwrap().lines().count(), 1);
    let bad_line = run("up{job=\"a\"} 1\nup{job= 0\n");
    assert_eq!(bad_line.status.code(), Some(1));
    assert!(String::from_utf8(bad_line.stderr).unwrap().starts_with("2:"));
}

/// promcat with `args`, the page on its standard input.
fn promcat_on(args: &[&str], page: &str) -> std::process::Output {
    let mut child = Command::new(promcat_binary())
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // promcat stops reading at a page's first error, so the rest may find the pipe closed.
    if let Err(e) = child.stdin.take().unwrap().write_all(page.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

#[test]
fn promcat_reads_openmetrics2_when_told_and_prints_what_text_cannot_say() {
    let page = "# TYPE foo counter\nfoo_total 17.0 1520879607.789 st@1520430000.123\n\
                # TYPE h histogram\nh {count:17,sum:3.5,bucket:[0.1:8,+Inf:17]} st@1520430000.123\n# EOF\n";
    let as_one = promcat_on(&["-", "--openmetrics"], page);
    assert_eq!(as_one.status.code(), Some(1), "OpenMetrics 1.0 has no st@");
    let lines = promcat_on(&["-", "--openmetrics=2.0"], page);
    assert_eq!(
        lines.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&lines.stderr)
    );
    // Written back as 2.0 lines: they parse to the same samples.
    let text = String::from_utf8(lines.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| l.ends_with("st@1520430000.123")), "{text}");
    let json = promcat_on(&["-", "--openmetrics=2.0", "--json"], page);
    let rows: Vec<serde_json::Value> = String::from_utf8(json.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["start_timestamp_ms"], 1_520_430_000_123_i64);
    assert_eq!(rows[1]["composite"]["count"], 17.0);
    assert_eq!(
        rows[1]["composite"]["buckets"],
        serde_json::json!([[0.1, 8.0], ["+Inf", 17.0]])
    );
    let refused = promcat_on(&["-", "--openmetrics=3.0"], page);
    assert_eq!(refused.status.code(), Some(2));
}
