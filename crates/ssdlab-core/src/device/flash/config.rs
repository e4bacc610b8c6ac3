//! The `[flash]` section of a device file: [`FlashFile`] as written,
//! [`FlashConfig`] resolved, and its checks.

use crate::config::{d_str, Collector};
use serde::{Deserialize, Serialize};

/// `[flash]`: the flash scheduler.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashFile {
    /// `sequential`, `interleaved` or `out-of-order` (seed 001, after Ozone).
    #[serde(default = "d_exec")]
    pub execution: String,
    /// Priority order of transaction kinds, highest first.
    #[serde(default = "d_prio")]
    pub priority: Vec<String>,
    /// Suspend an ongoing program for a waiting read.
    #[serde(default)]
    pub program_suspend: bool,
    /// Suspend an ongoing erase for a waiting read.
    #[serde(default)]
    pub erase_suspend: bool,
}
fn d_exec() -> String {
    d_str("out-of-order")
}
fn d_prio() -> Vec<String> {
    vec![d_str("read"), d_str("write"), d_str("erase")]
}
impl Default for FlashFile {
    fn default() -> Self {
        FlashFile {
            execution: d_exec(),
            priority: d_prio(),
            program_suspend: false,
            erase_suspend: false,
        }
    }
}

/// Flash scheduler execution model (seed 001, after the Ozone controller).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionModel {
    /// One operation at a time per channel controller, bus and die included.
    Sequential,
    /// Operations overlap across the chips of a bus; completions in issue order.
    Interleaved,
    /// Operations overlap; only the order of operations on the same die is kept.
    OutOfOrder,
}

/// Transaction kinds for scheduler priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Page read.
    Read,
    /// Page program.
    Write,
    /// Block erase.
    Erase,
}

/// Resolved flash scheduler parameters.
#[derive(Debug, Clone, Serialize)]
pub struct FlashConfig {
    /// Execution model.
    pub execution: ExecutionModel,
    /// Priority order, highest first.
    pub priority: Vec<OpKind>,
    /// Program suspend.
    pub program_suspend: bool,
    /// Erase suspend.
    pub erase_suspend: bool,
}

impl FlashFile {
    /// Resolve and check `[flash]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> FlashConfig {
        let fl = self;
        let execution = match fl.execution.as_str() {
            "sequential" => ExecutionModel::Sequential,
            "interleaved" => ExecutionModel::Interleaved,
            "out-of-order" => ExecutionModel::OutOfOrder,
            o => {
                c.push("flash.execution", format!("'{o}' is not an execution model (expected sequential, interleaved or out-of-order)"));
                ExecutionModel::OutOfOrder
            }
        };
        let mut priority = Vec::new();
        for (i, s) in fl.priority.iter().enumerate() {
            let k = match s.as_str() {
                "read" => OpKind::Read,
                "write" => OpKind::Write,
                "erase" => OpKind::Erase,
                o => {
                    c.push(
                        &format!("flash.priority[{i}]"),
                        format!("'{o}' is not a transaction kind (expected read, write, erase)"),
                    );
                    continue;
                }
            };
            if priority.contains(&k) {
                c.push(
                    &format!("flash.priority[{i}]"),
                    format!("'{s}' appears twice"),
                );
            }
            priority.push(k);
        }
        if priority.len() != 3
            && !c
                .problems
                .iter()
                .any(|p| p.key.starts_with("flash.priority"))
        {
            c.push(
                "flash.priority",
                "must list read, write and erase once each, highest priority first",
            );
        }
        FlashConfig {
            execution,
            priority,
            program_suspend: fl.program_suspend,
            erase_suspend: fl.erase_suspend,
        }
    }
}
