//! Property tests of the FTL against a shadow model: after any sequence of
//! writes, overwrites, TRIMs, flushes and garbage collection on random small
//! geometries and victim policies, every LBA reads back its latest version,
//! free-page accounting balances and WAF = programmed / host-written; and
//! the FTL knows which buffered LPNs hold a GC copy as their latest version.

use proptest::prelude::*;
use ssdlab_core::config::{logical_units, DeviceFile};
use ssdlab_core::ftl::{Ftl, Mapping};
use ssdlab_core::nand::Geometry;
use ssdlab_core::units::{Lpn, Ppa};
use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug, Clone)]
enum Op {
    Write(u32),
    Trim(u32),
    Flush,
}

#[derive(Debug, Clone)]
struct Geo {
    channels: u32,
    dies: u32,
    planes: u32,
    multi_plane: bool,
    blocks: u32,
    wls: u32,
    tlc: bool,
    page_kib: u32,
    op_pct: u32,
    policy: &'static str,
}

fn geo_strategy() -> impl Strategy<Value = Geo> {
    (
        1u32..=2,
        1u32..=2,
        1u32..=2,
        any::<bool>(),
        32u32..=40,
        2u32..=6,
        any::<bool>(),
        prop_oneof![Just(4u32), Just(8)],
        30u32..=50,
        prop_oneof![
            Just("greedy"),
            Just("cost-benefit"),
            Just("random"),
            Just("fifo"),
            Just("d-choice")
        ],
    )
        .prop_map(
            |(channels, dies, planes, multi_plane, blocks, wls, tlc, page_kib, op_pct, policy)| {
                Geo {
                    channels,
                    dies,
                    planes,
                    multi_plane,
                    blocks,
                    wls,
                    tlc,
                    page_kib,
                    op_pct,
                    policy,
                }
            },
        )
}

fn build(g: &Geo) -> Ftl {
    let (cell, pages, reads, progs, one_shot) = if g.tlc {
        (
            "tlc",
            g.wls * 3,
            r#"["40us","45us","50us"]"#,
            r#"["400us","400us","400us"]"#,
            "one_shot_program = true\nt_prog_one_shot = \"1ms\"",
        )
    } else {
        ("slc", g.wls, r#"["25us"]"#, r#"["200us"]"#, "")
    };
    let text = format!(
        "name = \"prop\"\n[cache]\nwrite_buffer = \"1MiB\"\n[ftl]\nmapping_unit = \"4KiB\"\nover_provisioning = \"{}%\"\ngc_policy = \"{}\"\ngc_threshold = 2\ngc_hard_threshold = 1\n[nand]\nchannels = {}\nchips_per_channel = {}\ndies_per_chip = 1\nplanes_per_die = {}\nmulti_plane = {}\nblocks_per_plane = {}\npages_per_block = {}\npage_size = \"{}KiB\"\ncell = \"{}\"\nt_read = {}\nt_prog = {}\n{}\nt_erase = \"3ms\"\nbus_bandwidth = \"400MB/s\"\n",
        g.op_pct, g.policy, g.channels, g.dies, g.planes, g.multi_plane, g.blocks, pages, g.page_kib, cell, reads, progs, one_shot
    );
    let dev = match DeviceFile::from_toml_str(&text, "prop").and_then(|f| f.resolve("prop")) {
        Ok(d) => d,
        Err(e) => panic!("generated geometry must be valid: {e}\n{text}"),
    };
    let geo = Geometry::new(&dev.nand, dev.ftl.mapping_unit);
    let n = logical_units(&dev.nand, &dev.ftl);
    Ftl::new(geo, dev.ftl, n, 9)
}

struct Model {
    ftl: Ftl,
    buf: BTreeMap<u32, u64>,
    flash: HashMap<u32, (u32, u64)>,
    latest: HashMap<u32, Option<u64>>,
    /// Buffered LPNs whose latest version is a GC copy (no host write or
    /// trim since it was relocated).
    gc_copies: HashSet<u32>,
    version: u64,
    cursor: usize,
}

impl Model {
    fn gc_round(&mut self, unit: u32) -> bool {
        let Some(victim) = self.ftl.select_victim(unit) else {
            return false;
        };
        for (ppa, lpn) in self.ftl.valid_slots(victim) {
            let (l, v) = self.flash[&ppa.0];
            assert_eq!(l, lpn.0, "P2L disagrees with what was programmed");
            if self.ftl.relocate_to_buffer(ppa, lpn) {
                self.buf.insert(l, v);
                self.gc_copies.insert(l);
            }
        }
        assert_eq!(self.ftl.valid_count(victim), 0);
        let first = self.ftl.geo.block_first_slot(victim);
        for s in first..first + self.ftl.geo.slots_per_block {
            self.flash.remove(&s);
        }
        self.ftl.erase(victim);
        true
    }

    fn flush(&mut self) {
        let spp = self.ftl.geo.slots_per_program as usize;
        if self.buf.len() < spp {
            return;
        }
        let units = self.ftl.stripe().to_vec();
        for _ in 0..4 {
            let pick = (0..units.len())
                .map(|i| units[(self.cursor + i) % units.len()])
                .find(|&u| self.ftl.can_allocate(u, true));
            match pick {
                Some(u) => {
                    self.cursor += 1;
                    let first = self
                        .ftl
                        .allocate_program(u, false)
                        .expect("can_allocate promised a slot");
                    let take: Vec<(u32, u64)> =
                        self.buf.iter().take(spp).map(|(&l, &v)| (l, v)).collect();
                    for (i, (l, v)) in take.into_iter().enumerate() {
                        self.buf.remove(&l);
                        self.gc_copies.remove(&l);
                        let p = first.0 + i as u32;
                        self.ftl.commit(Lpn(l), Ppa(p));
                        self.flash.insert(p, (l, v));
                    }
                    while self.ftl.needs_gc(u, 0) {
                        if !self.gc_round(u) {
                            break;
                        }
                    }
                    return;
                }
                None => {
                    // Every unit is at its host floor: collect on the fullest one.
                    let u = *units
                        .iter()
                        .min_by_key(|&&u| self.ftl.free_blocks(u))
                        .expect("units");
                    if !self.gc_round(u) {
                        return;
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(0x55d1ab), ..ProptestConfig::default() })]

    #[test]
    fn every_lba_reads_back_its_latest_version(g in geo_strategy(), ops in prop::collection::vec((0u8..10, any::<u32>()), 200..3000)) {
        let ftl = build(&g);
        let n = ftl.logical_units() as u32;
        let mut m = Model { ftl, buf: BTreeMap::new(), flash: HashMap::new(), latest: HashMap::new(), gc_copies: HashSet::new(), version: 0, cursor: 0 };
        for (kind, x) in ops {
            let op = match kind { 0 => Op::Trim(x % n), 1..=2 => Op::Flush, _ => Op::Write(x % n) };
            match op {
                Op::Write(l) => {
                    m.version += 1;
                    m.gc_copies.remove(&l);
                    m.ftl.write_to_buffer(Lpn(l));
                    m.buf.insert(l, m.version);
                    m.latest.insert(l, Some(m.version));
                }
                Op::Trim(l) => {
                    m.ftl.trim(Lpn(l));
                    m.buf.remove(&l);
                    m.gc_copies.remove(&l);
                    m.latest.insert(l, None);
                }
                Op::Flush => m.flush(),
            }
            // Writing far more than the buffer holds keeps GC busy.
            if m.buf.len() > 64 { m.flush(); }
            for (&l, _) in m.buf.iter().take(8) {
                prop_assert_eq!(m.ftl.gc_copy_is_latest(Lpn(l)), m.gc_copies.contains(&l), "lpn {}", l);
            }
        }
        // Then overwrite a hot half of the space four times over, so every case runs GC.
        for round in 0..4u32 {
            for l in (0..n).filter(|l| (l ^ round) % 2 == 0) {
                m.version += 1;
                m.gc_copies.remove(&l);
                m.ftl.write_to_buffer(Lpn(l));
                m.buf.insert(l, m.version);
                m.latest.insert(l, Some(m.version));
                m.flush();
            }
        }
        prop_assert!(m.ftl.stats.gc_runs > 0, "the sequence must exercise GC");
        for l in 0..n {
            prop_assert_eq!(m.ftl.gc_copy_is_latest(Lpn(l)), m.gc_copies.contains(&l), "lpn {}", l);
        }
        prop_assert!(m.ftl.check_invariants().is_ok(), "{:?}", m.ftl.check_invariants());
        for l in 0..n {
            let want = m.latest.get(&l).copied().flatten();
            match (m.ftl.lookup(Lpn(l)), want) {
                (Mapping::Unmapped, None) => {}
                (Mapping::InBuffer, Some(v)) => prop_assert_eq!(m.buf.get(&l), Some(&v)),
                (Mapping::Flash(p), Some(v)) => prop_assert_eq!(m.flash.get(&p.0), Some(&(l, v))),
                (got, want) => prop_assert!(false, "lpn {l}: mapping {got:?}, latest version {want:?}"),
            }
        }
        // Free-page accounting: valid slots on flash = LPNs whose latest version is on flash.
        let on_flash = (0..n).filter(|&l| matches!(m.ftl.lookup(Lpn(l)), Mapping::Flash(_))).count() as u64;
        prop_assert_eq!(m.ftl.total_valid(), on_flash);
        // WAF = programmed / host-written.
        let s = &m.ftl.stats;
        if s.host_slots > 0 {
            prop_assert!((s.waf() - s.programmed_slots as f64 / s.host_slots as f64).abs() < 1e-12);
        }
    }
}
