//! Generated presets: the ten controller designs of seed 004 (PowerSim),
//! each the PM9A3-class drive plus a `[controller]` design and the shared
//! `[power]` parameters. Sources and assumptions: docs/models/controller-and-power.md
//! and docs/seed004.md.

/// Stage costs and core/accelerator parameters shared by all ten designs (assumptions, see docs).
const SEED004_COMMON: &str = r#"
[controller]
doorbell = "interrupt"

[controller.core_specs.arm-1ghz]
clock = "1GHz"
memory_latency = "80ns"          # DRAM access from a core with L1/L2 (seed 004's gem5 system has both)
active_power = "120mW"           # assumption: 1 GHz ARM core, leakage + runtime dynamic (McPAT-style)
idle_power = "30mW"              # assumption: Cortex-R class leakage at 1 GHz (seed 004 uses Cortex-R idle figures)

[controller.core_specs.arm-100mhz]
clock = "100MHz"
memory_latency = "80ns"
active_power = "12mW"
idle_power = "3mW"

[controller.costs]               # optimised firmware, per operation (assumptions; see docs)
fetch = { cycles = 300, mem_accesses = 4 }
parse = { cycles = 600, mem_accesses = 8 }
cache_lookup = { cycles = 1000, mem_accesses = 10 }
translate = { cycles = 300, mem_accesses = 6 }
issue = { cycles = 250, mem_accesses = 4 }
complete = { cycles = 200, mem_accesses = 3 }
gc = { cycles = 20000, mem_accesses = 300 }
cache_evict = { cycles = 300, mem_accesses = 4 }
block_alloc = { cycles = 500, mem_accesses = 8 }
"#;

const ACCEL: &str = r#"latency = "150ns"
throughput = "20Mop/s"
active_power = "4mW"
idle_power = "1mW""#;

fn cores(list: &[(&str, &[&str])]) -> String {
    let mut s = String::new();
    for (spec, stages) in list {
        let st: Vec<String> = stages.iter().map(|x| format!("\"{x}\"")).collect();
        s.push_str(&format!(
            "\n[[controller.cores]]\nspec = \"{spec}\"\nstages = [{}]\n",
            st.join(", ")
        ));
    }
    s
}

fn accels(list: &[(&str, u32)]) -> String {
    let mut s = String::new();
    for (stage, n) in list {
        s.push_str(&format!(
            "\n[[controller.accelerators]]\nstage = \"{stage}\"\ninstances = {n}\n{ACCEL}\n"
        ));
    }
    s
}

/// The controller part of seed-004 design `n` (1..=10).
fn seed004_design(n: u32) -> Option<(String, String)> {
    const G: &str = "arm-1ghz";
    const M: &str = "arm-100mhz";
    let all_1g = |skip: &str| -> Vec<(&'static str, &'static [&'static str])> {
        let mut v: Vec<(&str, &[&str])> = vec![(G, &["ftl"])];
        for st in [
            &["fetch"][..],
            &["parse"],
            &["cache_lookup"],
            &["translate"],
            &["issue"],
            &["complete"],
        ] {
            if st[0] != skip {
                v.push((G, st));
            }
        }
        v
    };
    let (desc, body) = match n {
        1 => (
            "one 1 GHz core per module (MQSim-like: queues never build)",
            cores(&all_1g("")),
        ),
        2 => (
            "100 MHz cores on the simple critical-path modules (fetch, translate, issue, complete)",
            cores(&[
                (G, &["ftl"]),
                (M, &["fetch"]),
                (G, &["parse"]),
                (G, &["cache_lookup"]),
                (M, &["translate"]),
                (M, &["issue"]),
                (M, &["complete"]),
            ]),
        ),
        3 => (
            "controller 1 with parse/split accelerated",
            cores(&all_1g("parse")) + &accels(&[("parse", 1)]),
        ),
        4 => (
            "controller 1 with the data-cache lookup accelerated",
            cores(&all_1g("cache_lookup")) + &accels(&[("cache_lookup", 1)]),
        ),
        5 => (
            "controller 1 with address translation accelerated",
            cores(&all_1g("translate")) + &accels(&[("translate", 1)]),
        ),
        6 => (
            "controller 1 with flash command issue accelerated",
            cores(&all_1g("issue")) + &accels(&[("issue", 1)]),
        ),
        7 => (
            "parse and cache lookup accelerated, simple modules on 100 MHz cores",
            cores(&[
                (G, &["ftl"]),
                (M, &["fetch"]),
                (M, &["translate"]),
                (M, &["issue"]),
                (M, &["complete"]),
            ]) + &accels(&[("parse", 1), ("cache_lookup", 1)]),
        ),
        8 => (
            "parse, cache lookup and translation accelerated, the rest on 100 MHz cores",
            cores(&[
                (G, &["ftl"]),
                (M, &["fetch"]),
                (M, &["issue"]),
                (M, &["complete"]),
            ]) + &accels(&[("parse", 1), ("cache_lookup", 1), ("translate", 1)]),
        ),
        9 => (
            "the whole critical path accelerated",
            cores(&[(G, &["ftl"])])
                + &accels(&[
                    ("fetch", 1),
                    ("parse", 1),
                    ("cache_lookup", 1),
                    ("translate", 1),
                    ("issue", 1),
                    ("complete", 1),
                ]),
        ),
        10 => (
            "the whole critical path accelerated, extra instances on the slowest modules",
            cores(&[(G, &["ftl"])])
                + &accels(&[
                    ("fetch", 1),
                    ("parse", 2),
                    ("cache_lookup", 2),
                    ("translate", 1),
                    ("issue", 1),
                    ("complete", 1),
                ]),
        ),
        _ => return None,
    };
    Some((desc.to_string(), body))
}

/// Generated preset text by name.
pub fn generated(name: &str) -> Option<String> {
    let n: u32 = name.strip_prefix("seed004-controller-")?.parse().ok()?;
    let (desc, design) = seed004_design(n)?;
    let base = crate::config::PRESETS
        .iter()
        .find(|(p, _)| *p == "pm9a3-960g")?
        .1;
    // Rename and describe; the PM9A3 preset has no [controller] section and its [power] section is kept.
    let mut text = String::new();
    for line in base.lines() {
        if line.starts_with("name = ") {
            text.push_str(&format!("name = \"seed004-controller-{n}\"\n"));
        } else if line.starts_with("description = ") {
            text.push_str(&format!(
                "description = \"Seed 004 controller {n}: {desc} (PM9A3-class drive)\"\n"
            ));
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    text.push_str(SEED004_COMMON);
    text.push_str(&design);
    Some(text)
}

/// Names of the generated presets.
pub fn generated_names() -> Vec<String> {
    (1..=10)
        .map(|n| format!("seed004-controller-{n}"))
        .collect()
}
