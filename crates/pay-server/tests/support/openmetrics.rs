//! `GET /metrics` of a server, parsed by the PyPI `prometheus-client` package's OpenMetrics
//! parser (not ours): each sample's type, name, labels and value.

use std::collections::BTreeMap;
use std::io::Write;

/// One sample as the parser read it: its family's name and type, its own name (a counter's
/// ends in `_total`), labels and value.
#[derive(Debug, Clone)]
pub struct Sample {
    pub family: String,
    pub kind: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Whether the parser can run (false: the Python package is missing, the caller skips; a
/// panic under `PAY_REQUIRE_ALL_TESTS=1`).
fn parser_present() -> bool {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if probe.is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert_ne!(
        std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref(),
        Ok("1"),
        "the Python prometheus-client package is required (pip install prometheus-client)"
    );
    eprintln!("SKIP: metrics parse (pip install prometheus-client)");
    false
}

/// Parses an exposition (None: the Python package is missing, see `parser_present`). A text
/// the parser refuses fails the test.
pub fn parse(text: &str) -> Option<Vec<Sample>> {
    if !parser_present() {
        return None;
    }
    let script = r#"
import sys, json
from prometheus_client.openmetrics.parser import text_string_to_metric_families
print(json.dumps([{"family": f.name, "type": f.type, "name": s.name, "labels": s.labels,
                   "value": s.value}
                  for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the parser refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        parsed
            .into_iter()
            .map(|s| Sample {
                family: s["family"].as_str().unwrap().to_owned(),
                kind: s["type"].as_str().unwrap().to_owned(),
                name: s["name"].as_str().unwrap().to_owned(),
                labels: serde_json::from_value(s["labels"].clone()).unwrap(),
                value: s["value"].as_f64().unwrap(),
            })
            .collect(),
    )
}

/// Scrapes `{base}/metrics` with `token` (blocking, from a test thread outside any runtime)
/// and parses it (None: the parser is missing, see `parse`).
#[allow(dead_code)]
pub fn scrape(base: &str, token: &str) -> Option<Vec<Sample>> {
    if !parser_present() {
        return None;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let text = rt
        .block_on(async {
            reqwest::Client::new()
                .get(format!("{base}/metrics"))
                .bearer_auth(token)
                .send()
                .await?
                .error_for_status()?
                .text()
                .await
        })
        .expect("scrape /metrics");
    parse(&text)
}

/// The gauge `name`'s value for `chain` (None: no such sample); checks the family's type and
/// name (a gauge's samples are named as their family).
#[allow(dead_code)]
pub fn chain_gauge(samples: &[Sample], name: &str, chain: &str) -> Option<f64> {
    let s = samples
        .iter()
        .find(|s| s.name == name && s.labels.get("chain").map(String::as_str) == Some(chain))?;
    assert_eq!(
        (s.kind.as_str(), s.family.as_str()),
        ("gauge", name),
        "{s:?}"
    );
    Some(s.value)
}
