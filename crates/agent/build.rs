//! Records the compiler's version: an agent's error events name the
//! runtime version of its language (spec 6).

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    println!("cargo:rustc-env=MONFORM_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
