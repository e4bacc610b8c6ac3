//! The command path inside the drive: SQE fetch and arbitration, the front
//! firmware stages, cache lookup and translation, flash reads grouped per
//! physical page, host DMA over the drive's PCIe port, the write buffer's
//! admission, trims, flushes, and the completion (CQE and interrupt).

use super::{Drive, TAG_HREAD, TAG_RMW, TAG_SHIFT};
use crate::config::OpKind;
use crate::device::flash::Txn;
use crate::device::ftl::Mapping;
use crate::device::nvme::{CQE_BYTES, MSIX_BYTES, SQE_BYTES};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::fabric::Fabric;
use crate::units::{Lpn, Ppa, Time};
use crate::workload::Op;

impl Drive {
    pub(super) fn try_fetch(&mut self, now: Time, eq: &mut EventQueue<Event>, fabric: &mut Fabric) {
        loop {
            let free = self.fw.fetch_free_at();
            if free > now {
                if !self.fetch_wakeup && self.ctl.has_pending() {
                    self.fetch_wakeup = true;
                    eq.at(free, Event::FetchFree { d: self.index });
                }
                return;
            }
            let Some(cmd) = self.ctl.arbitrate() else {
                return;
            };
            let t = self.fw.fetch(now);
            let arrive = fabric.device_read(self.port, t, SQE_BYTES);
            self.book_front(cmd, arrive, eq);
        }
    }

    /// Command `cmd`'s SQE arrives at `arrive`: book its front stages now
    /// when their executors are dedicated, or, when cores may be shared
    /// between stages, when the SQE actually arrives (in event order).
    pub(super) fn book_front(&mut self, cmd: u32, arrive: Time, eq: &mut EventQueue<Event>) {
        if self
            .fw
            .compute
            .as_ref()
            .is_some_and(|c| !c.front_is_dedicated())
        {
            eq.at(arrive, Event::Fetched { d: self.index, cmd });
        } else {
            let (units, issue) = self.front_units(cmd);
            let ready = self.fw.front(arrive, units, issue);
            eq.at(ready, Event::FrontDone { d: self.index, cmd });
        }
    }

    /// Mapping units of command `cmd` for the front stages, and how many of
    /// them the issue stage handles now: a read's units become flash reads
    /// (or, on a RAM disk, DMA set-ups), as do a RAM disk write's; a flash
    /// drive's write is issued when its program unit is ([`Drive::program`]);
    /// trims and flushes issue nothing.
    #[inline]
    pub(super) fn front_units(&self, cmd: u32) -> (u64, u64) {
        let c = &self.cmds[cmd as usize];
        let n = c.nlpn as u64;
        let issue = match c.op {
            Op::Read => n,
            Op::Write if self.ramdisk => n,
            Op::Write | Op::Trim | Op::Flush => 0,
        };
        (n, issue)
    }

    pub(super) fn process(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let c = self.cmds[cmd as usize];
        match c.op {
            Op::Trim => return self.deallocate(now, cmd, eq, fabric),
            Op::Flush => return self.flush_cmd(now, cmd, eq, fabric),
            Op::Read | Op::Write => {}
        }
        let write = c.op == Op::Write;
        if self.ramdisk {
            // RAM disk: the data lives in controller DRAM.
            let b = self.dma_bytes(cmd, c.nlpn as u64 * self.unit_bytes);
            self.act.dram_bytes += b;
            let xfer = self.dram_xfer.time(b);
            let done = if write {
                let arrive = self.data_in(fabric, cmd, now, b);
                Some(self.dram.reserve(arrive, xfer).1 + self.dev.cache.dram_latency)
            } else {
                let t = self.dram.reserve(now, xfer).1 + self.dev.cache.dram_latency;
                if self.read_data_waits(now, b, fabric) {
                    self.queue_read_data(now, cmd, b, t, eq, fabric);
                    None
                } else {
                    Some(self.data_out(fabric, cmd, t, b))
                }
            };
            let (port, lat) = (self.port, self.dev.cache.dram_latency);
            self.fw.host_dma(now, || {
                xfer + lat
                    + if write {
                        fabric.device_read_time(port, b)
                    } else {
                        fabric.device_write_time(port, b)
                    }
            });
            self.cmds[cmd as usize].pending = 1;
            if let Some(done) = done {
                eq.at(done, Event::ReadDma { d: self.index, cmd });
            }
            return;
        }
        if write {
            if self.wait_buffer.is_empty() && self.cache.reserve(c.nlpn as u64) {
                self.start_write_dma(now, cmd, eq, fabric);
            } else {
                self.wait_buffer.push_back(cmd);
                if self.gather.is_some() {
                    // A buffer of whole blocks evicts on demand: this
                    // write's need may start one.
                    self.try_flush(now, eq);
                }
            }
            return;
        }
        // Read: with a cached mapping, first the translation pages.
        if self.mcache.is_some() && self.translate_read(now, cmd, eq) {
            return;
        }
        // Cache lookup, translation, grouping per physical page.
        let mut dram_units = 0u64;
        let mut zero_units = 0u64;
        let mut groups = std::mem::take(&mut self.scratch_groups);
        groups.clear();
        for l in c.lpn..c.lpn + c.nlpn {
            if self.cache.read_lookup(l) {
                dram_units += 1;
                continue;
            }
            match self.ftl.lookup(Lpn(l)) {
                Mapping::Unmapped => zero_units += 1,
                Mapping::InBuffer => dram_units += 1,
                Mapping::Flash(p) => {
                    let key = self.geo.page_row(p);
                    let plane = self.geo.plane_bit(p);
                    match groups.iter_mut().find(|g| g.0 == key) {
                        Some(g) => {
                            g.2 += 1;
                            g.3 |= plane;
                        }
                        None => groups.push((key, p.0, 1, plane)),
                    }
                }
            }
        }
        let mut pending = 0;
        for &(_, first, n, planes) in &groups {
            let a = self.geo.decode(Ppa(first));
            let die = self.geo.die_of_unit(a.unit);
            let t = Txn {
                kind: OpKind::Read,
                die,
                t_array: self
                    .timings
                    .read_in(self.ftl.is_slc(Ppa(first)), self.geo.page_type(a.page)),
                bytes: n as u64 * self.unit_bytes,
                owner: (TAG_HREAD << TAG_SHIFT) | ((n as u64) << 32) | cmd as u64,
                slc: false,
            };
            pending += 1;
            // One page read per plane touched; the bus carries only the slots asked for.
            self.act.nand_read_pages += planes.count_ones() as u64;
            self.act.nand_bus_bytes += t.bytes;
            let d = self.index;
            self.flash
                .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
        }
        self.scratch_groups = groups;
        if dram_units + zero_units > 0 {
            pending += 1;
            let mut t = now;
            if dram_units > 0 {
                let b = dram_units * self.unit_bytes;
                self.act.dram_bytes += b;
                t = self.dram.reserve(now, self.dram_xfer.time(b)).1 + self.dev.cache.dram_latency;
            }
            let bytes = self.dma_bytes(cmd, (dram_units + zero_units) * self.unit_bytes);
            let arrive = if self.read_data_waits(now, bytes, fabric) {
                None
            } else {
                Some(self.data_out(fabric, cmd, t, bytes))
            };
            let (port, unit, cache, dx) =
                (self.port, self.unit_bytes, &self.dev.cache, &self.dram_xfer);
            self.fw.host_dma(now, || {
                let mut span = fabric.device_write_time(port, bytes);
                if dram_units > 0 {
                    span = span + dx.time(dram_units * unit) + cache.dram_latency;
                }
                span
            });
            match arrive {
                Some(a) => eq.at(a, Event::ReadDma { d: self.index, cmd }),
                None => self.queue_read_data(now, cmd, bytes, t, eq, fabric),
            }
        }
        self.cmds[cmd as usize].pending = pending;
        if pending == 0 {
            self.complete(now, cmd, eq, fabric);
        }
    }

    /// Dataset Management (deallocate): unmap the range and drop any
    /// buffered copy; no data moves. The mapping updates are the firmware's
    /// per-page work already charged by the front stages.
    pub(super) fn deallocate(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let c = self.cmds[cmd as usize];
        if self.versions.is_some() {
            if let Err(e) = self.store_takes_trim(c.lpn, c.nlpn) {
                self.store_failed(e, now, eq);
            }
        }
        if !self.ramdisk {
            for l in c.lpn..c.lpn + c.nlpn {
                self.ftl.trim(Lpn(l));
                self.cache.drop_lpn(l);
            }
            if self.mcache.is_some() {
                for l in c.lpn..c.lpn + c.nlpn {
                    self.update_translation(now, l, eq);
                }
                self.try_flush(now, eq);
            }
            // Dropped buffer entries may have been all a pending flush waited
            // for, and free space writes wait for.
            self.complete_flushes(now, eq, fabric);
            self.admit_waiting_writes(now, eq, fabric);
        }
        self.complete(now, cmd, eq, fabric);
    }

    /// NVMe Flush: done once every write acknowledged before it is on flash.
    /// With power-loss protection (or a RAM disk) the buffer already counts
    /// as non-volatile and the flush completes at once; otherwise the buffer
    /// writes out what it holds, padding partial program units.
    pub(super) fn flush_cmd(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        if self.ramdisk || self.dev.cache.power_loss_protection {
            return self.complete(now, cmd, eq, fabric);
        }
        match self.cache.flush_barrier() {
            None => self.complete(now, cmd, eq, fabric),
            Some(barrier) => {
                self.flushes.push_back((barrier, cmd));
                self.try_flush(now, eq);
            }
        }
    }

    /// Complete the flushes whose data is now all on flash (in order).
    pub(super) fn complete_flushes(
        &mut self,
        now: Time,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        while let Some(&(barrier, cmd)) = self.flushes.front() {
            if !self.cache.flushed(barrier) {
                return;
            }
            self.flushes.pop_front();
            self.complete(now, cmd, eq, fabric);
        }
    }

    pub(super) fn part_done(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let c = &mut self.cmds[cmd as usize];
        c.pending -= 1;
        if c.pending == 0 {
            self.complete(now, cmd, eq, fabric);
        }
    }

    /// `bytes` of command `cmd`'s units less what of its sub-unit shortfall
    /// this transfer takes (the first transfers take it; each keeps at
    /// least one sector).
    #[inline]
    pub(super) fn dma_bytes(&mut self, cmd: u32, bytes: u64) -> u64 {
        let c = &mut self.cmds[cmd as usize];
        if c.short == 0 {
            return bytes;
        }
        let cut = (c.short as u64).min(bytes.saturating_sub(crate::workload::gen::Io::SECTOR));
        c.short -= cut as u32;
        bytes - cut
    }

    /// A write of part of a unit: the unit's old data is merged in DRAM
    /// (from the write buffer or read cache, or zeros if it was never
    /// written) or read from flash first. With a cached mapping table the
    /// old data's location is looked up first: a translation page not in
    /// DRAM is read before the old data (the command waits for it).
    /// Returns the flash reads issued or waiting for their translation.
    #[cold]
    #[inline(never)]
    fn read_modify_write(&mut self, now: Time, cmd: u32, eq: &mut EventQueue<Event>) -> u32 {
        let mut reads = 0;
        for (i, l) in self.rmw_units(cmd).into_iter().enumerate() {
            let Some(l) = l else { continue };
            self.ftl.stats.rmw_units += 1;
            if self.cache.read_lookup(l) {
                self.act.dram_bytes += self.unit_bytes;
                continue;
            }
            match self.ftl.lookup(Lpn(l)) {
                Mapping::Unmapped => {}
                Mapping::InBuffer => self.act.dram_bytes += self.unit_bytes,
                Mapping::Flash(p) => {
                    reads += 1;
                    if self.mcache.is_some() && self.rmw_translation_wait(now, l, cmd, eq) {
                        let w = cmd as usize;
                        if self.rmw_waiting.len() <= w {
                            self.rmw_waiting.resize(w + 1, 0);
                        }
                        self.rmw_waiting[w] |= 1 << i;
                        continue;
                    }
                    self.ftl.stats.rmw_flash_reads += 1;
                    self.read_unit(now, p, (TAG_RMW << TAG_SHIFT) | cmd as u64, eq);
                }
            }
        }
        reads
    }

    /// The partial units of write `cmd`: its first and last unit when the
    /// write covers them only in part.
    pub(super) fn rmw_units(&self, cmd: u32) -> [Option<u32>; 2] {
        let c = self.cmds[cmd as usize];
        let last = c.lpn + c.nlpn - 1;
        [
            c.head.then_some(c.lpn),
            (c.tail && !(c.head && last == c.lpn)).then_some(last),
        ]
    }

    pub(super) fn start_write_dma(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let c = self.cmds[cmd as usize];
        let n = self.dma_bytes(cmd, c.nlpn as u64 * self.unit_bytes);
        self.ftl.stats.host_bytes += n;
        // The data DMA, and the flash reads of a read-modify-write.
        let rmw = if c.head || c.tail {
            self.read_modify_write(now, cmd, eq)
        } else {
            0
        };
        self.cmds[cmd as usize].pending = 1 + rmw;
        self.act.dram_bytes += n;
        let arrive = self.data_in(fabric, cmd, now, n);
        let (_, e) = self.dram.reserve(arrive, self.dram_xfer.time(n));
        let done = e + self.dev.cache.dram_latency;
        let (port, cache, dx) = (self.port, &self.dev.cache, &self.dram_xfer);
        self.fw.host_dma(now, || {
            fabric.device_read_time(port, n) + dx.time(n) + cache.dram_latency
        });
        eq.at(done, Event::WriteIn { d: self.index, cmd });
    }

    /// A part of write `cmd` is done (its data DMA, or a read-modify-write's
    /// flash read): when all are, the data is in the buffer.
    pub(super) fn write_in(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let c = &mut self.cmds[cmd as usize];
        c.pending = c.pending.saturating_sub(1);
        if c.pending > 0 {
            return;
        }
        let c = *c;
        if self.versions.is_some() {
            if let Err(e) = self.store_takes_write(c.lpn, c.nlpn) {
                self.store_failed(e, now, eq);
            }
        }
        for l in c.lpn..c.lpn + c.nlpn {
            self.ftl.write_to_buffer(Lpn(l));
            self.cache.insert_host(l);
        }
        if self.gather.is_some() {
            self.block_buffer_touch(c.lpn..c.lpn + c.nlpn);
        }
        self.try_flush(now, eq);
        if !self.wait_buffer.is_empty() {
            // Rewrites of still-dirty units took reserved slots they did not
            // need: the space may fit the next waiting write.
            self.admit_waiting_writes(now, eq, fabric);
        }
        self.complete(now, cmd, eq, fabric);
    }

    /// One flash read of the single unit at `p` for `owner` (a
    /// read-modify-write's old data, a translation page).
    pub(super) fn read_unit(&mut self, now: Time, p: Ppa, owner: u64, eq: &mut EventQueue<Event>) {
        let a = self.geo.decode(p);
        let t = Txn {
            kind: OpKind::Read,
            die: self.geo.die_of_unit(a.unit),
            t_array: self
                .timings
                .read_in(self.ftl.is_slc(p), self.geo.page_type(a.page)),
            bytes: self.unit_bytes,
            owner,
            slc: false,
        };
        self.act.nand_read_pages += 1;
        self.act.nand_bus_bytes += t.bytes;
        let d = self.index;
        self.flash
            .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
    }

    /// Completion stage, CQE post and interrupt for a command whose data is
    /// done at `now` (which may be later than the current event time when a
    /// read's last DMA was just reserved on the link).
    pub(super) fn complete(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let t = self.fw.complete(now);
        let msix = (!self.dev.nvme.polling).then_some(MSIX_BYTES);
        let at = fabric.completion(self.port, t, CQE_BYTES, msix);
        eq.at(at, Event::HostDone { d: self.index, cmd });
    }
}
