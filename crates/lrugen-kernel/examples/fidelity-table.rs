// SPDX-License-Identifier: GPL-2.0-only
//! Print the model against every shape fixture as the markdown table of README.md, "Fidelity":
//! `cargo run --release -p lrugen-kernel --example fidelity-table`. No qemu: the fixtures are
//! checked in (`scripts/regen-kernel-shapes.sh` makes them). With a directory (`-- DIR`, e.g.
//! `crates/lrugen-kernel/tests/fixtures/traces`), the fixtures there instead.

use lrugen_kernel::fidelity;

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(fidelity::shapes_dir, std::path::PathBuf::from);
    let mut rows = Vec::new();
    let paths = fidelity::fixtures(&dir).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    for p in paths {
        match fidelity::compare(&p) {
            Ok(r) => rows.push(r),
            Err(e) => {
                eprintln!("error: {}: {e}", p.display());
                std::process::exit(1)
            }
        }
    }
    print!("{}", fidelity::markdown(&rows));
    // MGLRU − classic, kernel and model
    println!("\n| kernel | shape | MGLRU − classic misses, kernel | model |");
    println!("|---|---|---|---|");
    for m in rows.iter().filter(|r| r.lru == "mglru") {
        if let Some(c) = rows
            .iter()
            .find(|r| r.lru == "classic" && r.series == m.series && r.shape == m.shape)
        {
            let (mk, mm) = (m.check("misses").unwrap(), c.check("misses").unwrap());
            let dk = mk.kernel as i64 - mm.kernel as i64;
            let dm = mk.model as i64 - mm.model as i64;
            let same = fidelity::sign(mk.kernel, mm.kernel, fidelity::SIGN_BAND)
                == fidelity::sign(mk.model, mm.model, fidelity::SIGN_BAND);
            println!(
                "| {} | {} | {dk:+} | {dm:+}{} |",
                m.series,
                m.shape,
                if same { "" } else { " ✗" }
            );
        }
    }
    // checks not in the table, where either side is not 0
    for r in &rows {
        if let Some(c) = r
            .check("workingset_nodereclaim")
            .filter(|c| c.kernel != 0 || c.model != 0)
        {
            println!(
                "\n{} {} {}: workingset_nodereclaim kernel {} model {}{}",
                r.series,
                r.lru,
                r.shape,
                c.kernel,
                c.model,
                if c.ok { "" } else { " ✗" }
            );
        }
    }
}
