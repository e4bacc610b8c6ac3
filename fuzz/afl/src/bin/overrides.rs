//! `--set KEY=VALUE` overrides (one per line) on a preset (the first line
//! names it): parsed, applied and resolved. A device or a `ConfigError`.
fn main() {
    let presets = ssdlab_core::config::preset_names();
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let mut lines = text.lines();
        let name = lines.next().unwrap_or("");
        let name = if presets.iter().any(|n| n == name) {
            name.to_string()
        } else {
            "pm9a3-960g".to_string()
        };
        let sets: Vec<String> = lines.map(str::to_string).collect();
        if let Ok(o) = ssdlab_core::compose::parse_sets(&sets) {
            let _ = ssdlab_core::compose::load_named(&name, &o);
        }
    });
}
