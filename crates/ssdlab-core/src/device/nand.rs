//! NAND geometry, physical addressing and array timings.
//!
//! The FTL allocates in *parallel units*: a die when multi-plane operation is
//! on (its planes program, read and erase together), otherwise a single
//! plane. A unit-block is block `b` of every plane in the unit. Inside a
//! unit-block, slot offsets (mapping-unit sized) are laid out as
//! `((page * planes_per_unit) + plane) * slots_per_page + slot`, so one
//! program unit (a page, or a whole word line with one-shot programming,
//! across the unit's planes) is a contiguous slot range.

pub(crate) mod config;

use crate::config::NandConfig;
use crate::units::{Bytes, FastDiv, Ppa, Time};

/// Decoded physical location of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotAddr {
    /// Parallel unit index.
    pub unit: u32,
    /// Block index within the unit.
    pub block: u32,
    /// Page index within the block (0..pages_per_block).
    pub page: u32,
    /// Plane within the unit.
    pub plane: u32,
}

/// Geometry derived from the configuration. Its fields are read-only by
/// convention: build one with [`Geometry::new`] or
/// [`Geometry::one_channel`], which work out the divisions by its fields
/// that the hot path uses.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// Channels.
    pub channels: u32,
    /// Dies per channel.
    pub dies_per_channel: u32,
    /// Total dies.
    pub dies: u32,
    /// Planes per unit (planes_per_die with multi-plane, else 1).
    pub planes_per_unit: u32,
    /// Units per die.
    pub units_per_die: u32,
    /// Total units.
    pub units: u32,
    /// Blocks per unit (= blocks per plane).
    pub blocks_per_unit: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Mapping-unit slots per page.
    pub slots_per_page: u32,
    /// Slots per unit-block.
    pub slots_per_block: u32,
    /// Pages programmed together (bits per cell with one-shot, else 1).
    pub pages_per_program: u32,
    /// Slots per program unit.
    pub slots_per_program: u32,
    /// Bits per cell.
    pub bits: u32,
    /// Mapping unit bytes.
    pub mapping_unit: Bytes,
    /// Factory bad blocks per unit.
    pub bad_per_unit: u32,
    /// Rated program/erase cycles per block (`nand.endurance`).
    pub endurance: u32,
    /// Chance that an erase fails and retires its block (`nand.grown_bad_rate`).
    pub grown_bad_rate: f64,
    /// Divisions by the fields above, by multiplication (the hot path's
    /// address arithmetic).
    div: GeometryDiv,
}

/// [`FastDiv`]s of the [`Geometry`] divisors used on the hot path.
#[derive(Debug, Clone, Copy)]
struct GeometryDiv {
    slots_per_block: FastDiv,
    slots_per_row: FastDiv,
    slots_per_page: FastDiv,
    planes_per_unit: FastDiv,
    blocks_per_unit: FastDiv,
    units_per_die: FastDiv,
    dies_per_channel: FastDiv,
    /// Bits per cell (page types).
    bits: FastDiv,
}

impl Geometry {
    /// Derive the geometry.
    pub fn new(n: &NandConfig, mapping_unit: Bytes) -> Geometry {
        let planes_per_unit = if n.multi_plane { n.planes_per_die } else { 1 };
        let units_per_die = n.planes_per_die / planes_per_unit;
        let dies = n.total_dies();
        let slots_per_page = (n.page_size.0 / mapping_unit.0) as u32;
        let pages_per_program = if n.t_prog_one_shot.is_some() {
            n.cell.bits()
        } else {
            1
        };
        let slots_per_block = planes_per_unit * n.pages_per_block * slots_per_page;
        let fd = FastDiv::new;
        let div = GeometryDiv {
            slots_per_block: fd(slots_per_block),
            slots_per_row: fd(planes_per_unit * slots_per_page),
            slots_per_page: fd(slots_per_page),
            planes_per_unit: fd(planes_per_unit),
            blocks_per_unit: fd(n.blocks_per_plane),
            units_per_die: fd(units_per_die),
            dies_per_channel: fd(n.dies_per_channel()),
            bits: fd(n.cell.bits()),
        };
        Geometry {
            channels: n.channels,
            dies_per_channel: n.dies_per_channel(),
            dies,
            planes_per_unit,
            units_per_die,
            units: dies * units_per_die,
            blocks_per_unit: n.blocks_per_plane,
            pages_per_block: n.pages_per_block,
            slots_per_page,
            slots_per_block,
            pages_per_program,
            slots_per_program: pages_per_program * planes_per_unit * slots_per_page,
            bits: n.cell.bits(),
            mapping_unit,
            bad_per_unit: crate::ftl::factory_bad_per_unit(
                n.blocks_per_plane,
                n.factory_bad_blocks,
            ),
            endurance: n.endurance,
            grown_bad_rate: n.grown_bad_rate,
            div,
        }
    }

    /// The same NAND as `units` parallel units on one channel, a unit a die
    /// (the scaled steady state's reduced drive). Build geometries with
    /// [`Geometry::new`] or this, never by changing fields: the divisions
    /// the hot path uses are worked out from them once.
    pub fn one_channel(&self, units: u32) -> Geometry {
        let mut g = self.clone();
        g.channels = 1;
        g.dies_per_channel = units;
        g.dies = units;
        g.units_per_die = 1;
        g.units = units;
        g.div.units_per_die = FastDiv::new(1);
        g.div.dies_per_channel = FastDiv::new(units);
        g
    }

    /// Total physical slots.
    pub fn total_slots(&self) -> u64 {
        self.units as u64 * self.blocks_per_unit as u64 * self.slots_per_block as u64
    }

    /// Global block id of (unit, block).
    #[inline]
    pub fn block_id(&self, unit: u32, block: u32) -> u32 {
        unit * self.blocks_per_unit + block
    }

    /// First slot of a global block id.
    #[inline]
    pub fn block_first_slot(&self, block_id: u32) -> u32 {
        block_id * self.slots_per_block
    }

    /// Global block id holding a slot.
    #[inline]
    pub fn block_of(&self, ppa: Ppa) -> u32 {
        self.div.slots_per_block.quotient(ppa.0)
    }

    /// Global page row of a slot: the (multi-plane) page it is in, the
    /// slots `row * planes_per_unit * slots_per_page ..` of the next row.
    #[inline]
    pub fn page_row(&self, ppa: Ppa) -> u32 {
        self.div.slots_per_row.quotient(ppa.0)
    }

    /// The bit of the plane (within its unit) slot `ppa` is on, in a
    /// multi-plane operation's plane mask (plane 63 and above share bit 63).
    #[inline]
    pub fn plane_bit(&self, ppa: Ppa) -> u64 {
        let (_, in_row) = self.div.slots_per_row.divmod(ppa.0);
        1u64 << self.div.slots_per_page.quotient(in_row).min(63)
    }

    /// Unit of a global block id.
    #[inline]
    pub fn unit_of_block(&self, block_id: u32) -> u32 {
        self.div.blocks_per_unit.quotient(block_id)
    }

    /// Die of a unit.
    #[inline]
    pub fn die_of_unit(&self, unit: u32) -> u32 {
        self.div.units_per_die.quotient(unit)
    }

    /// Channel of a die (dies are numbered channel-major: die = ch * dies_per_channel + way).
    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        self.div.dies_per_channel.quotient(die)
    }

    /// Decode a slot address.
    #[inline]
    pub fn decode(&self, ppa: Ppa) -> SlotAddr {
        let d = &self.div;
        let bid = d.slots_per_block.quotient(ppa.0);
        let off = ppa.0 - bid * self.slots_per_block;
        let page_plane = d.slots_per_page.quotient(off);
        let unit = d.blocks_per_unit.quotient(bid);
        let page = d.planes_per_unit.quotient(page_plane);
        SlotAddr {
            unit,
            block: bid - unit * self.blocks_per_unit,
            page,
            plane: page_plane - page * self.planes_per_unit,
        }
    }

    /// Page type (0 = LSB, 1 = CSB/MSB, ...) of a page index.
    #[inline]
    pub fn page_type(&self, page: u32) -> u32 {
        // By multiplication: a division here was about 1 % of a random
        // read's time (docs/performance.md).
        self.div.bits.divmod(page).1
    }
}

/// Array timings for one operation.
#[derive(Debug, Clone)]
pub struct Timings {
    /// Read per page type.
    pub t_read: Vec<Time>,
    /// Program latency of one program unit, per first-page type (page-by-page) or one-shot.
    pub t_prog: Vec<Time>,
    /// One-shot program latency.
    pub t_prog_one_shot: Option<Time>,
    /// Erase.
    pub t_erase: Time,
    /// Read of a page of a block in SLC mode (zero without an SLC cache).
    pub t_read_slc: Time,
    /// Program of one program unit into an SLC-mode block: one SLC page
    /// program per page the unit holds (`pages_per_program` word lines).
    pub t_prog_slc_unit: Time,
}

impl Timings {
    /// From config.
    pub fn new(n: &NandConfig) -> Timings {
        Timings {
            t_read: n.t_read.clone(),
            t_prog: n.t_prog.clone(),
            t_prog_one_shot: n.t_prog_one_shot,
            t_erase: n.t_erase,
            t_read_slc: n.t_read_slc.unwrap_or(Time::ZERO),
            t_prog_slc_unit: n.t_prog_slc.unwrap_or(Time::ZERO).times(
                if n.t_prog_one_shot.is_some() {
                    n.cell.bits() as u64
                } else {
                    1
                },
            ),
        }
    }
    /// Read latency of a page.
    #[inline]
    pub fn read(&self, page_type: u32) -> Time {
        self.t_read[page_type as usize]
    }
    /// Read latency of a page of type `page_type`, or of any page of a
    /// block in SLC mode (`slc`).
    #[inline]
    pub fn read_in(&self, slc: bool, page_type: u32) -> Time {
        if slc {
            self.t_read_slc
        } else {
            self.read(page_type)
        }
    }
    /// Program latency of the program unit starting at `page`.
    #[inline]
    pub fn program(&self, page_type: u32) -> Time {
        match self.t_prog_one_shot {
            Some(t) => t,
            None => self.t_prog[page_type as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Device;

    #[test]
    fn decode_round_trip() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
        assert_eq!(g.units, 32);
        assert_eq!(g.planes_per_unit, 2);
        assert_eq!(g.slots_per_program, 2 * 3 * 4);
        let bid = g.block_id(5, 17);
        let first = g.block_first_slot(bid);
        let a = g.decode(Ppa(first + 2 * 4 * 7 + 4 + 3));
        assert_eq!(
            a,
            SlotAddr {
                unit: 5,
                block: 17,
                page: 7,
                plane: 1
            }
        );
        assert_eq!(g.page_type(7), 1);
        assert_eq!(g.channel_of_die(g.die_of_unit(5)), 1);
    }

    /// Address arithmetic by multiplication ([`FastDiv`]) gives what plain
    /// division gives, with and without multi-plane units, and on a reduced
    /// one-channel copy, on every slot of the first and last blocks and a
    /// stride through the rest.
    #[test]
    fn addresses_match_plain_division() {
        for (name, multi_plane, reduced) in [
            ("pm9a3-960g", true, None),
            ("pm9a3-960g", false, None),
            ("pm9a3-960g", false, Some(3)),
            ("970evo-1t", true, None),
            ("970evo-1t", true, Some(4)),
        ] {
            let mut d = Device::preset(name).unwrap();
            d.nand.multi_plane = multi_plane;
            let mut g = Geometry::new(&d.nand, d.ftl.mapping_unit);
            if let Some(units) = reduced {
                g = g.one_channel(units);
                assert_eq!((g.channels, g.dies, g.units), (1, units, units));
            }
            let total = g.total_slots() as u32;
            let spb = g.slots_per_block;
            let slots = (0..spb)
                .chain(total - spb..total)
                .chain((0..total).step_by(7919));
            for p in slots {
                let bid = p / spb;
                let off = p % spb;
                let pp = off / g.slots_per_page;
                let want = SlotAddr {
                    unit: bid / g.blocks_per_unit,
                    block: bid % g.blocks_per_unit,
                    page: pp / g.planes_per_unit,
                    plane: pp % g.planes_per_unit,
                };
                assert_eq!(g.decode(Ppa(p)), want, "{name} slot {p}");
                assert_eq!(g.plane_bit(Ppa(p)), 1 << want.plane.min(63));
                assert_eq!(g.block_of(Ppa(p)), bid);
                assert_eq!(g.unit_of_block(bid), want.unit);
                assert_eq!(
                    g.page_row(Ppa(p)),
                    p / (g.planes_per_unit * g.slots_per_page)
                );
                let die = want.unit / g.units_per_die;
                assert_eq!(g.die_of_unit(want.unit), die);
                assert_eq!(g.channel_of_die(die), die / g.dies_per_channel);
                assert_eq!(g.page_type(want.page), want.page % g.bits);
            }
        }
    }
}
