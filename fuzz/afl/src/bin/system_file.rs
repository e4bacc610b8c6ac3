//! A system file (root complex, switches, drives): parse and resolve, with
//! drives' devices from the presets. A system or a `ConfigError`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            if let Ok(f) = ssdlab_core::system::config::SystemFile::from_toml_str(text, "fuzz.toml")
            {
                let _ = f.resolve("fuzz.toml", std::path::Path::new("."));
            }
        }
    });
}
