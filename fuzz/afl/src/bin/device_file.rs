//! A device file: parse, compose (`extends` of presets) and resolve. Every
//! input is a device or a `ConfigError` with key paths; never a panic.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = ssdlab_core::compose::load(text, "fuzz.toml", &[]);
        }
    });
}
