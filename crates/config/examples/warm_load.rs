//! Times a load of the project at argv[1] with its parse cache
//! (`.monform/cache`), `RUNS` times (default 5): the loader's share of a
//! plan at scale, measured alone.
use std::path::Path;
use std::time::Instant;

fn main() {
    let root = std::env::args().nth(1).expect("a project folder");
    let runs: usize = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let root = Path::new(&root);
    let env = |_: &str| None;
    for _ in 0..runs {
        let started = Instant::now();
        let loaded = monform_config::load_with_cache(root, &env, None, Some(&root.join(monform_config::CACHE_DIR)));
        let took = started.elapsed();
        println!(
            "{:7.1} ms  {} resources  {:?}  {} diagnostics",
            took.as_secs_f64() * 1e3,
            loaded.desired.len(),
            loaded.cache,
            loaded.diagnostics.len()
        );
        let dropped = Instant::now();
        drop(loaded);
        println!("  drop {:.1} ms", dropped.elapsed().as_secs_f64() * 1e3);
    }
}
