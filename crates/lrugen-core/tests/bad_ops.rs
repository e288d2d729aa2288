// SPDX-License-Identifier: GPL-2.0-only
//! Operations naming what does not exist (a file, a page past the end, a task) are refused with
//! an error that says so, never a panic: op streams come from users' traces and op files.

use lrugen::kernel::{AccessError, Kernel};
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::workload::Op;

#[test]
fn reads_and_writes_of_what_does_not_exist_are_errors() {
    let m = Machine::new(MachineConfig::simple(1_024, 0));
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    let task = k.create_mm(ROOT_MEMCG);
    let file = k.m.create_file("f", 4, Advice::Normal);
    let fault = |r: Result<_, AccessError>| match r {
        Err(AccessError::Fault(s)) => s,
        r => panic!("{r:?}"),
    };
    let e = fault(k.step(Op::Read {
        task,
        file: file + 1,
        index: 0,
    }));
    assert!(e.contains("read of file 1, which does not exist"), "{e}");
    let e = fault(k.step(Op::Write {
        task,
        file: 7,
        index: 0,
    }));
    assert!(e.contains("write of file 7, which does not exist"), "{e}");
    let e = fault(k.step(Op::Read { task, file, index: 4 }));
    assert!(e.contains("read past the end of file 0 (4 >= 4 pages)"), "{e}");
    let e = fault(k.step(Op::Write {
        task: 9,
        file,
        index: 0,
    }));
    assert!(e.contains("task 9 does not exist"), "{e}");
    assert!(k.step(Op::Write { task, file, index: 3 }).is_ok());
    k.check().unwrap();
}
