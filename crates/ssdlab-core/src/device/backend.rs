//! Behind the write buffer: full program units to the next parallel unit in
//! striping order, garbage collection (victim, relocation reads through the
//! buffer, erase), and the completion of every flash transaction.

pub(crate) mod config;

use super::{
    Drive, GcJob, GC_READS_INFLIGHT, PROGRAMS_PER_DIE, ROOM_BY_STRIPE, ROOM_BY_UNIT, TAG_ERASE,
    TAG_GCREAD, TAG_HCKPT, TAG_HREAD, TAG_HYB, TAG_MAPPROG, TAG_MAPREAD, TAG_PROG, TAG_RMW,
    TAG_SHIFT,
};
use crate::config::{OpKind, SlcWhenFull};
use crate::device::flash::Txn;
use crate::engine::EventQueue;
use crate::events::Event;
use crate::fabric::Fabric;
use crate::units::{Lpn, Ppa, Time};

#[cold]
fn unreachable_room() -> ! {
    unreachable!("a drive keeps its dies' program room marked from its construction on")
}

#[cold]
fn unreachable_program(unit: u32) {
    debug_assert!(false, "unit {unit}: allocation failed after can_allocate");
}

impl Drive {
    /// Program full program units from the DRAM buffer: GC relocation data
    /// back into its own unit first, then host data to the next unit in
    /// striping order whose die has room in its program queue.
    pub(super) fn try_flush(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        if !self.hyb.is_empty() {
            return self.hybrid_flush(now, eq);
        }
        if self.lcache.is_some() {
            self.drain_validity(now, eq);
        }
        // Every die already has its programs queued: nothing can be flushed
        // (the common case under sustained writes; avoids scanning the units).
        if self.program_room == 0 {
            return;
        }
        if !self.map_queue.is_empty() {
            self.flush_translations(now, eq);
        }
        let spp = self.geo.slots_per_program;
        debug_assert!(self.write_room_is_current());
        if self.cache.dirty_gc_total() >= spp {
            // Unit by unit, those whose die has program room (the flash
            // scheduler keeps them marked; testing every unit cost a
            // mispredicted branch on most).
            let mut next = self.next_room(ROOM_BY_UNIT, 0);
            while let Some(u) = next {
                let u = u as u32;
                while self.cache.dirty_gc(u) >= spp
                    && self.flash.die_load(self.geo.die_of_unit(u), OpKind::Write)
                        < PROGRAMS_PER_DIE
                    && self.ftl.can_allocate(u, false)
                {
                    self.program(now, u, false, eq);
                }
                next = self.next_room(ROOM_BY_UNIT, u as usize + 1);
            }
        }
        if self.hold_erase && self.cache.dirty_gc_total() > 0 {
            self.drain_gc_copies(now, eq);
        }
        // While data written before the oldest pending flush is still dirty,
        // partial program units are written out too (padded).
        loop {
            // Re-checked every pass: once the data before the barrier is in
            // programs, newer data is packed into full units again.
            let force = self.flush_waits_on_dirty();
            if !((force || self.cache.dirty_host() + self.cache.dirty_gc_total() >= spp)
                && self.cache.dirty_host() > 0)
            {
                return;
            }
            // The next unit in striping order whose die has program room
            // (the usual reason to pass a unit over: only the positions
            // the flash scheduler marks are visited), enough data for it
            // and a block to program.
            let n = self.stripe_dies.len();
            let start = *self.ftl.stripe_cursor() % n;
            let chosen = self.stripe_with_room(start, |d, u| {
                (force || d.cache.dirty_host() + d.cache.dirty_gc(u) >= spp)
                    && d.ftl.can_allocate(u, true)
            });
            let Some((pos, u)) = chosen else {
                if self.ftl.has_slc() && self.dev.ftl.slc_when_full == SlcWhenFull::Fold {
                    // Host data waits for SLC room: fold where it is full.
                    for u in 0..self.geo.units {
                        if !self.ftl.slc_room(u) {
                            self.maybe_gc(now, u, 0, eq);
                        }
                    }
                }
                return;
            };
            *self.ftl.stripe_cursor() = (pos + 1) % n;
            self.program(now, u, true, eq);
        }
    }

    /// The first index of the flash scheduler's room view `view` from
    /// `from` on whose die can take another program.
    #[inline(always)]
    pub(super) fn next_room(&self, view: usize, from: usize) -> Option<usize> {
        match self.flash.write_room() {
            Some(r) => r.next(view, from),
            None => unreachable_room(),
        }
    }

    /// The first stripe position from `start` on, wrapping, whose die can
    /// take another program and whose unit passes `ok`: (position, unit).
    /// Only the positions the flash scheduler marks are visited, in the
    /// order a walk of every position from `start` would reach them.
    #[inline]
    pub(super) fn stripe_with_room(
        &self,
        start: usize,
        ok: impl Fn(&Drive, u32) -> bool,
    ) -> Option<(usize, u32)> {
        let mut next = self.next_room(ROOM_BY_STRIPE, start);
        let mut wrapped = false;
        loop {
            let pos = match next {
                Some(p) if !wrapped || p < start => p,
                _ if !wrapped => {
                    wrapped = true;
                    next = self.next_room(ROOM_BY_STRIPE, 0);
                    continue;
                }
                _ => return None,
            };
            let u = self.ftl.stripe()[pos];
            if ok(self, u) {
                return Some((pos, u));
            }
            next = self.next_room(ROOM_BY_STRIPE, pos + 1);
        }
    }

    /// Debug builds: the scheduler's room marks agree with the dies' loads.
    fn write_room_is_current(&self) -> bool {
        let Some(r) = self.flash.write_room() else {
            return false;
        };
        let room = |die: u32| self.flash.die_load(die, OpKind::Write) < PROGRAMS_PER_DIE;
        (0..self.geo.units)
            .all(|u| r.has(ROOM_BY_UNIT, u as usize) == room(self.geo.die_of_unit(u)))
            && (0..self.stripe_dies.len())
                .all(|p| r.has(ROOM_BY_STRIPE, p) == room(self.stripe_dies[p]))
    }

    /// Whether the oldest pending flush waits for host data still dirty in
    /// the buffer (written before its barrier): partial program units (or
    /// groups) go out too.
    #[inline]
    pub(super) fn flush_waits_on_dirty(&self) -> bool {
        self.flushes
            .front()
            .is_some_and(|&(barrier, _)| self.cache.dirty_before(barrier))
    }

    /// Allocate one program unit on `u` and issue its program transaction.
    pub(super) fn program(&mut self, now: Time, u: u32, host: bool, eq: &mut EventQueue<Event>) {
        let spp = self.geo.slots_per_program as usize;
        let pid = match self.free_progs.pop() {
            Some(p) => p,
            None => {
                self.progs.push((Vec::with_capacity(spp), 0));
                (self.progs.len() - 1) as u32
            }
        };
        let (mut lpns, _) = std::mem::take(&mut self.progs[pid as usize]);
        lpns.clear();
        // The staleness check reads each staged LPN's L2P entry: overlap the misses.
        for l in self.cache.gc_staged(u, spp) {
            self.ftl.prefetch(Lpn(l));
        }
        // The FTL's "GC copy is the latest" is the buffer's old test: mapped
        // to the buffer and no dirty host version there.
        #[cfg(debug_assertions)]
        for l in self.cache.gc_staged(u, usize::MAX) {
            let old_test = self.ftl.lookup(Lpn(l)) == crate::device::ftl::Mapping::InBuffer
                && !self.cache.has_dirty_host(l);
            debug_assert_eq!(
                self.ftl.gc_copy_is_latest(Lpn(l)),
                old_test,
                "GC copy of {l}"
            );
        }
        let ftl = &self.ftl;
        let gc = self.cache.take_for_program(
            u,
            spp,
            host,
            pid,
            |l| ftl.gc_copy_is_latest(Lpn(l)),
            &mut lpns,
        );
        self.ftl.stats.relocated_programmed += gc as u64;
        if lpns.is_empty() {
            // Every staged GC entry had gone stale.
            self.progs[pid as usize] = (lpns, 0);
            self.free_progs.push(pid);
            return;
        }
        self.fw.background(1, now);
        let Some(first) = self.ftl.allocate_program(u, host) else {
            unreachable_program(u);
            return;
        };
        if first.0 % self.geo.slots_per_block == 0 {
            // A new active block was opened for this program.
            self.fw.background(2, now);
        }
        self.fw.issue_flash_command(now);
        // The program unit's data is read out of the buffer on its way to the
        // channel (streamed: it occupies DRAM bandwidth but does not delay the
        // slower channel transfer).
        let out = spp as u64 * self.unit_bytes;
        self.act.dram_bytes += out;
        self.dram.reserve(now, self.dram_xfer.time(out));
        for &l in &lpns {
            self.ftl.prefetch(Lpn(l));
        }
        if self.prog_at.len() <= pid as usize {
            self.prog_at.resize(pid as usize + 1, None);
        }
        self.prog_at[pid as usize] = Some((first, self.ftl.commit_seq()));
        self.ftl.commit_unit(&lpns, first);
        if self.versions.is_some() {
            self.store_program_issued(first, &lpns);
        }
        if gc > 0 {
            self.gc_progs[u as usize] += 1;
        }
        if self.ckpt.is_some() {
            let lu = self.ftl.logical_units();
            let data = lpns.iter().filter(|&&l| u64::from(l) < lu).count() as u64;
            self.checkpoint_after_program(now, host, data, eq);
        }
        if self.mcache.is_some() {
            for &l in &lpns {
                self.update_translation(now, l, eq);
            }
        }
        self.progs[pid as usize] = (lpns, gc);
        let a = self.geo.decode(first);
        let slc = self.ftl.is_slc(first);
        let t = Txn {
            kind: OpKind::Write,
            die: self.geo.die_of_unit(u),
            t_array: if slc {
                self.timings.t_prog_slc_unit
            } else {
                self.timings.program(self.geo.page_type(a.page))
            },
            bytes: spp as u64 * self.unit_bytes,
            owner: (TAG_PROG << TAG_SHIFT) | pid as u64,
            slc,
        };
        self.program_room = self.program_room.wrapping_sub(1);
        let d = self.index;
        self.flash
            .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
        self.maybe_gc(now, u, 0, eq);
    }

    /// With a volatile buffer a victim waits for the copies moved out of
    /// it: when a GC job has read all its data and less than a program
    /// unit of copies is left in DRAM, program them now, with host data
    /// behind them if there is any (else padded), then let the victim go.
    /// A unit with no room left for them (no free block, its active block
    /// full: a victim nearly all valid, as the random and static
    /// wear-levelling policies may pick) erases the victim first, as a drive
    /// without that care would; those erases are counted
    /// (`gc_victims_erased_early`), since a power loss then loses the copies.
    fn drain_gc_copies(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        for u in 0..self.geo.units {
            let waiting = self.gc[u as usize]
                .as_ref()
                .is_some_and(|j| j.next == j.slots.len() && j.inflight == 0 && !j.erasing);
            if !waiting || self.cache.dirty_gc(u) == 0 {
                continue;
            }
            if !self.ftl.can_allocate(u, false) {
                if self.gc_progs[u as usize] == 0 {
                    if let Some(j) = self.gc[u as usize].as_mut() {
                        j.early = true;
                    }
                    self.gc_early_erases += 1;
                    self.gc_issue(now, u, eq);
                }
                continue;
            }
            if self.flash.die_load(self.geo.die_of_unit(u), OpKind::Write) < PROGRAMS_PER_DIE {
                let host = self.cache.dirty_host() > 0 && self.ftl.can_allocate(u, true);
                self.program(now, u, host, eq);
                if self.cache.dirty_gc(u) == 0 && self.gc_progs[u as usize] == 0 {
                    // Every copy had gone stale: nothing was programmed.
                    self.gc_issue(now, u, eq);
                }
            }
        }
    }

    pub(super) fn maybe_gc(
        &mut self,
        now: Time,
        unit: u32,
        margin: u32,
        eq: &mut EventQueue<Event>,
    ) {
        if self.gc[unit as usize].is_some() || !self.hyb.is_empty() {
            // Block and hybrid mapping merge instead (`hybrid`).
            return;
        }
        let mut victim = None;
        if self.ftl.needs_gc(unit, margin) {
            self.fw.background(0, now);
            victim = self.ftl.select_victim(unit);
        }
        if victim.is_none() && self.slc_idle && self.ftl.slc_closed(unit) == 0 {
            // Idle: the open SLC block is folded too (its rest stays unused).
            self.ftl.close_slc_active(unit);
        }
        if victim.is_none() && self.wants_fold(unit) {
            self.fw.background(0, now);
            victim = self.ftl.select_fold_victim(unit);
        }
        let Some(victim) = victim else {
            return;
        };
        let slots = self.ftl.valid_slots(victim);
        self.gc[unit as usize] = Some(GcJob {
            victim,
            slots,
            next: 0,
            inflight: 0,
            erasing: false,
            early: false,
            validity_wait: 0,
        });
        if self.lcache.is_some() {
            // Which slots to copy is in the victim's validity pages.
            let w = self.gc_validity_wait(now, unit, victim, eq);
            if let Some(j) = self.gc[unit as usize].as_mut() {
                j.validity_wait = w;
            }
        }
        self.gc_issue(now, unit, eq);
    }

    /// Does read data wait in the controller rather than book the link now?
    /// Behind a switch, while the drive's own link is busy (or earlier data
    /// waits): see [`Fabric::up_backlog`].
    #[inline]
    pub(super) fn read_data_waits(&self, now: Time, bytes: u64, fabric: &Fabric) -> bool {
        !self.dma_wait.is_empty() || fabric.up_backlog(self.port, now, bytes).is_some()
    }

    /// Queue `bytes` of command `cmd`'s read data, ready at `ready`, for the
    /// link; a [`Event::ReadDma`] marks its arrival at the host.
    pub(super) fn queue_read_data(
        &mut self,
        now: Time,
        cmd: u32,
        bytes: u64,
        ready: Time,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        self.dma_wait.push_back((cmd, bytes, ready, false));
        self.send_waiting_dma(now, false, eq, fabric);
    }

    /// Send the waiting read-data transfers the link can take now, one at a
    /// time; wake up when it can take the next. On that wake-up (`woken`)
    /// the first transfer goes without a second look: it was due then, and
    /// only completion entries and interrupts (which always go at once) can
    /// have been booked on the link since; waiting behind them again would
    /// cost a second wake-up per transfer and hold data back by a few ns.
    pub(super) fn send_waiting_dma(
        &mut self,
        now: Time,
        woken: bool,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let mut due = woken;
        while let Some(&(cmd, bytes, ready, direct)) = self.dma_wait.front() {
            let first_due = std::mem::take(&mut due);
            if let Some(free) = fabric
                .up_backlog(self.port, now, bytes)
                .filter(|_| !first_due)
            {
                if !self.dma_wakeup {
                    self.dma_wakeup = true;
                    eq.at(free, Event::DmaReady { d: self.index });
                }
                return;
            }
            self.dma_wait.pop_front();
            let arrive = self.data_out(fabric, cmd, ready.max(now), bytes);
            if direct {
                // As an undeferred flash read's data: its arrival is known.
                self.part_done(arrive, cmd, eq, fabric);
            } else {
                eq.at(arrive, Event::ReadDma { d: self.index, cmd });
            }
        }
    }

    /// Fold an SLC block of `unit` now? When the drive has been idle for
    /// `slc_fold_idle`, or, with `slc_when_full = "fold"`, when host data
    /// cannot go to SLC on this unit.
    fn wants_fold(&self, unit: u32) -> bool {
        self.ftl.has_slc()
            && self.ftl.slc_closed(unit) > 0
            && (self.slc_idle
                || (self.dev.ftl.slc_when_full == SlcWhenFull::Fold && !self.ftl.slc_room(unit)))
    }

    /// A GC job reads no further while this many of its unit's copies
    /// wait in DRAM for a program (four program units).
    #[inline]
    fn gc_staging_limit(&self) -> u32 {
        4 * self.geo.slots_per_program
    }

    pub(super) fn gc_issue(&mut self, now: Time, unit: u32, eq: &mut EventQueue<Event>) {
        let staging_limit = self.gc_staging_limit();
        let Some(job) = self.gc[unit as usize].as_mut() else {
            return;
        };
        if job.validity_wait > 0 {
            // Its validity pages are being loaded (L-log).
            return;
        }
        while job.inflight < GC_READS_INFLIGHT
            && job.next < job.slots.len()
            && self.cache.dirty_gc(unit) < staging_limit
        {
            let start = job.next;
            // The slots of the same multi-plane page.
            let row = self.geo.page_row(job.slots[start].0);
            let mut end = start + 1;
            while end < job.slots.len() && self.geo.page_row(job.slots[end].0) == row {
                end += 1;
            }
            job.next = end;
            job.inflight += 1;
            // Their L2P entries are read when the data arrives: fetch them
            // now, so the relocation finds them in cache (no effect on results).
            for &(_, l) in &job.slots[start..end] {
                self.ftl.prefetch(l);
            }
            let geo = &self.geo;
            let planes = job.slots[start..end]
                .iter()
                .fold(0u64, |m, s| m | geo.plane_bit(s.0));
            // GC reads are flash commands the firmware issues, and cost NAND
            // energy like host reads.
            self.fw.issue_flash_command(now);
            self.act.nand_read_pages += planes.count_ones() as u64;
            self.act.nand_bus_bytes += (end - start) as u64 * self.unit_bytes;
            let a = self.geo.decode(job.slots[start].0);
            let t = Txn {
                kind: OpKind::Read,
                die: self.geo.die_of_unit(unit),
                t_array: self.timings.read_in(
                    self.ftl.is_slc(job.slots[start].0),
                    self.geo.page_type(a.page),
                ),
                bytes: (end - start) as u64 * self.unit_bytes,
                owner: (TAG_GCREAD << TAG_SHIFT)
                    | ((unit as u64) << 32)
                    | ((start as u64) << 16)
                    | (end - start) as u64,
                slc: false,
            };
            let d = self.index;
            self.flash
                .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
        }
        if job.next == job.slots.len()
            && job.inflight == 0
            && !job.erasing
            && (!self.hold_erase
                || job.early
                || (self.cache.dirty_gc(unit) == 0 && self.gc_progs[unit as usize] == 0))
        {
            job.erasing = true;
            self.fw.issue_flash_command(now);
            let t = Txn {
                kind: OpKind::Erase,
                die: self.geo.die_of_unit(unit),
                t_array: self.timings.t_erase,
                bytes: 0,
                owner: (TAG_ERASE << TAG_SHIFT) | unit as u64,
                slc: false,
            };
            let d = self.index;
            self.flash
                .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
        }
        // A victim read out (or with nothing valid left) whose erase waits
        // for copies of an earlier victim still in DRAM, with no program of
        // them under way: program them now. Nothing else may come to do it
        // (host writes can be waiting for the block this erase frees; found
        // by the swarm, seed 1187: a stall).
        if self.hold_erase
            && self.gc_progs[unit as usize] == 0
            && self.cache.dirty_gc(unit) > 0
            && self.gc[unit as usize]
                .as_ref()
                .is_some_and(|j| j.next == j.slots.len() && j.inflight == 0 && !j.erasing)
        {
            self.drain_gc_copies(now, eq);
        }
    }

    pub(super) fn txn_done(
        &mut self,
        now: Time,
        owner: u64,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let tag = owner >> TAG_SHIFT;
        match tag {
            TAG_HREAD => {
                let cmd = (owner & 0xffff_ffff) as u32;
                let n = (owner >> 32) & 0xff_ffff;
                let bytes = self.dma_bytes(cmd, n * self.unit_bytes);
                let port = self.port;
                self.fw
                    .host_dma(now, || fabric.device_write_time(port, bytes));
                if self.read_data_waits(now, bytes, fabric) {
                    self.dma_wait.push_back((cmd, bytes, now, true));
                    self.send_waiting_dma(now, false, eq, fabric);
                } else {
                    let arrive = self.data_out(fabric, cmd, now, bytes);
                    // The link is FIFO per direction: the DMA reserved last
                    // arrives last, so the command completes when this one
                    // arrives if it is the command's last outstanding part.
                    self.part_done(arrive, cmd, eq, fabric);
                }
            }
            TAG_RMW => {
                // The old unit is in DRAM, merged with the host's sectors.
                let cmd = (owner & 0xffff_ffff) as u32;
                self.act.dram_bytes += self.unit_bytes;
                self.dram.reserve(now, self.dram_xfer.time(self.unit_bytes));
                self.write_in(now, cmd, eq, fabric);
            }
            TAG_GCREAD => {
                let unit = ((owner >> 32) & 0xff_ffff) as u32;
                let start = ((owner >> 16) & 0xffff) as usize;
                let n = (owner & 0xffff) as usize;
                if let Some(job) = self.gc[unit as usize].as_mut() {
                    for &(_, l) in &job.slots[start..start + n] {
                        self.ftl.prefetch(l);
                    }
                    for i in start..start + n {
                        let (p, l) = job.slots[i];
                        match self.ftl.as_translation_page(l) {
                            None => {
                                if self.ftl.relocate_to_buffer(p, l) {
                                    self.cache.insert_gc(l.0, unit);
                                }
                            }
                            // A translation page: back to the translation write queue.
                            Some(t) => {
                                if self.ftl.relocate_translation(p, t) {
                                    self.map_queue.push_back(t);
                                }
                            }
                        }
                    }
                    job.inflight -= 1;
                }
                // GC data moved over the channel into DRAM.
                self.act.dram_bytes += n as u64 * self.unit_bytes;
                self.dram
                    .reserve(now, self.dram_xfer.time(n as u64 * self.unit_bytes));
                self.gc_issue(now, unit, eq);
                self.try_flush(now, eq);
            }
            TAG_PROG => {
                let pid = (owner & 0xffff_ffff) as u32;
                self.program_room = self.program_room.wrapping_add(1);
                let (lpns, gc) = std::mem::take(&mut self.progs[pid as usize]);
                for &l in &lpns[gc..] {
                    self.cache.program_done(l, pid);
                }
                let at = self.prog_at[pid as usize].take();
                if let (Some((first, seq)), true) = (at, self.ftl.tracks_durability()) {
                    // The versions it holds are durable now (kept only
                    // when a power loss is scheduled).
                    for (i, &l) in lpns.iter().enumerate() {
                        self.ftl
                            .programmed(Lpn(l), Ppa(first.0 + i as u32), seq + 1 + i as u64);
                    }
                    if self.versions.is_some() {
                        self.store_program_done(first, &lpns);
                    }
                }
                self.progs[pid as usize] = (lpns, gc);
                self.free_progs.push(pid);
                if gc > 0 {
                    if let Some((first, _)) = at {
                        let u = self.geo.unit_of_block(self.geo.block_of(first));
                        self.gc_progs[u as usize] -= 1;
                        if self.hold_erase {
                            // Its victim may have waited for these copies.
                            self.gc_issue(now, u, eq);
                        }
                    }
                }
                self.program_done(now, eq, fabric);
            }
            TAG_MAPPROG => {
                self.program_room = self.program_room.wrapping_add(1);
                self.checkpoint_program_done(now, owner);
                self.program_done(now, eq, fabric);
            }
            TAG_HYB => self.hybrid_txn_done(now, (owner & 0xff_ffff) as u32, eq, fabric),
            TAG_HCKPT => self.hybrid_checkpoint_txn_done(now, owner, eq),
            TAG_MAPREAD => {
                self.translation_read_done(now, (owner & 0xffff_ffff) as u32, eq, fabric);
            }
            TAG_ERASE => {
                let unit = (owner & 0xff_ffff) as u32;
                if let Some(job) = self.gc[unit as usize].take() {
                    self.ftl.erase(job.victim);
                    if self.ftl.worn_out().is_some() && !self.worn_out_raised {
                        // The run ends here, with the reason.
                        self.worn_out_raised = true;
                        eq.at(now, Event::WornOut { d: self.index });
                    }
                }
                if self.slc_sampling.is_some() {
                    self.note_slc(now);
                }
                self.try_flush(now, eq);
                self.maybe_gc(now, unit, 0, eq);
            }
            _ => {}
        }
    }

    /// Start the writes waiting for write-buffer space that now fit, in
    /// arrival order (a program finished, or a trim dropped buffered data).
    pub(super) fn admit_waiting_writes(
        &mut self,
        now: Time,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        while let Some(&c) = self.wait_buffer.front() {
            if self.cache.reserve(self.cmds[c as usize].nlpn as u64) {
                self.wait_buffer.pop_front();
                self.start_write_dma(now, c, eq, fabric);
            } else {
                break;
            }
        }
    }

    /// A program (data or translation pages) finished: flushes it satisfied
    /// complete, writes waiting for buffer space start, GC reads it held
    /// back resume, and the buffer programs what it can.
    pub(super) fn program_done(
        &mut self,
        now: Time,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        if self.slc_sampling.is_some() {
            self.note_slc(now);
        }
        if !self.flushes.is_empty() {
            self.complete_flushes(now, eq, fabric);
        }
        self.admit_waiting_writes(now, eq, fabric);
        // The jobs that can issue a read now (gc_issue's own conditions,
        // tested here: most are held by their staging limit).
        let staging_limit = self.gc_staging_limit();
        for u in 0..self.geo.units {
            if self.gc[u as usize].as_ref().is_some_and(|j| {
                j.next < j.slots.len() && j.inflight < GC_READS_INFLIGHT && j.validity_wait == 0
            }) && self.cache.dirty_gc(u) < staging_limit
            {
                self.gc_issue(now, u, eq);
            }
        }
        self.try_flush(now, eq);
    }
}
