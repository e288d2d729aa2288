// SPDX-License-Identifier: GPL-2.0-only
//! Print the model against every multi-task fixture (`tests/fixtures/multitask/`, two boots of
//! each experiment) as the markdown table of README.md, "Fidelity":
//! `cargo run --release -p lrugen-kernel --example multitask-table`. No qemu
//! (`scripts/regen-kernel-multitask.sh` makes the fixtures). With `-v`, every check.

use lrugen_kernel::fidelity;

fn main() {
    let verbose = std::env::args().any(|a| a == "-v");
    let fail = |e: String| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    let groups = fidelity::multitask_groups(&fidelity::multitask_dir()).unwrap_or_else(|e| fail(e.to_string()));
    let mut rows = Vec::new();
    for (name, boots) in groups {
        let r = fidelity::compare_boots(&name, &boots).unwrap_or_else(|e| fail(format!("{name}: {e}")));
        if verbose {
            for c in &r.checks {
                eprintln!(
                    "{name} {}: model {} kernel {:?} ({:+.1} % of their mean; spread {:.1} %, tolerance {:.1} % or {}){}",
                    c.what,
                    c.model,
                    c.kernel,
                    c.diff_pct(),
                    c.spread * 100.0,
                    c.tolerance * 100.0,
                    c.floor,
                    if c.ok { "" } else { " OUT" }
                );
            }
        }
        rows.push(r);
    }
    print!("{}", fidelity::multitask_markdown(&rows));
}
