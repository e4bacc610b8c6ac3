//! Options accepted but without effect on a simulated drive, each with the
//! reason listed in the report (`Workload::ignored`).

use crate::workload::IgnoredOption;

/// Record an ignored option unless it is already listed.
pub(super) fn ignore(ignored: &mut Vec<IgnoredOption>, option: &str, reason: &str) {
    if !ignored.iter().any(|i| i.option == option) {
        ignored.push(IgnoredOption {
            option: option.to_string(),
            reason: reason.to_string(),
        });
    }
}

/// Why an option is accepted but has no effect, or `None` if it is not such an option.
pub(super) fn ignored_reason(key: &str) -> Option<&'static str> {
    Some(match key {
        "ioengine" => "the simulator is the I/O engine",
        "invalidate" => "the page cache starts empty for every job",
        "filename" | "directory" | "filename_format" => "the simulated drive is the target",
        "group_reporting" => {
            "applies to --output-format fio / fio-json (one entry per reporting group); \
             ssdlab's own report is per direction for the whole run"
        }
        "name" => "the section name names the job",
        "description" => "free text with no effect on the I/O",
        "thread" => "host threads and processes are not modelled",
        "iodepth_batch"
        | "iodepth_batch_submit"
        | "iodepth_batch_complete_min"
        | "iodepth_batch_complete" => "the NVMe queue model submits each I/O as it is generated",
        "gtod_reduce" | "clocksource" => {
            "simulated time is exact; host clock settings do not apply"
        }
        "per_job_logs" | "write_bw_log" | "write_lat_log" | "write_iops_log" | "log_avg_msec" => {
            "time series are produced by ssdlab itself"
        }
        "output-format" => "ssdlab writes its own report",
        "io_submit_mode" => {
            "the NVMe queue model submits each I/O as it is generated (inline and offload \
             submission look the same to the drive)"
        }
        "random_generator" => {
            "ssdlab draws random offsets from its own seeded generator; with the random map \
             (the default) every block is hit once per pass, as lfsr guarantees"
        }
        "cmd_type" => {
            "the simulated drive is the NVMe device: the job's reads and writes reach it as \
             NVMe commands whether passed through (io_uring_cmd) or not"
        }
        "rate_min" | "ratemin" | "rate_iops_min" | "rate_cycle" => {
            "fio aborts a job that falls below rate_min; ssdlab reports the achieved rate instead"
        }
        "thinktime_spin" => {
            "spinning and sleeping look the same to the drive; thinktime is the total idle time"
        }
        "replay_redirect" => "the simulated drive is the target of the replay",
        "cpus_allowed"
        | "cpus_allowed_policy"
        | "cpumask"
        | "numa_cpu_nodes"
        | "numa_mem_policy"
        | "nice"
        | "prio"
        | "prioclass"
        | "ioscheduler" => {
            "host CPU placement and scheduling are not modelled (one host CPU per job clone)"
        }
        "create_on_open"
        | "create_serialize"
        | "create_fsync"
        | "unlink"
        | "unlink_each_loop"
        | "allow_mounted_write"
        | "overwrite"
        | "fallocate"
        | "pre_read"
        | "lockfile"
        | "fadvise_hint"
        | "fadvise_stream" => "the simulated drive is the target (no files)",
        "refill_buffers" | "scramble_buffers" => {
            "with a data store (--data-store) writes carry fresh pseudo-random data each time already"
        }
        "buffer_compress_percentage" | "buffer_compress_chunk" | "dedupe_percentage" => {
            "the drive model has no compression or deduplication, so compressibility changes nothing"
        }
        "verify_async" | "verify_async_cpus" => {
            "the host's CPU time for checking is not modelled, so async and inline verify are the same"
        }
        "verify_dump" => "a failed block is reported, not dumped to a file",
        "verifysort" | "verifysort_nr" => "obsolete in fio; ignored there too",
        "iomem" | "mem" | "iomem_align" | "mem_align" | "hugepage_size" | "lockmem" => {
            "host I/O buffers are not modelled"
        }
        "disable_lat"
        | "disable_clat"
        | "disable_slat"
        | "disable_bw_measurement"
        | "clat_percentiles"
        | "lat_percentiles"
        | "slat_percentiles"
        | "percentile_list"
        | "significant_figures"
        | "stats"
        | "unified_rw_reporting"
        | "write_hist_log"
        | "log_hist_msec"
        | "log_hist_coarseness"
        | "log_max_value"
        | "log_offset"
        | "log_compression"
        | "log_store_compressed" => {
            "ssdlab's statistics are fixed: every latency is recorded, per direction, with \
             fio's 17 default percentiles in fio-json"
        }
        "exitall_on_error" | "continue_on_error" | "ignore_error" | "error_dump" => {
            "the simulated drive returns no I/O errors"
        }
        "allrandrepeat" => "every ssdlab random stream is seeded from the run seed (reruns repeat)",
        "log_entries" | "log_window_value" | "log_prio" | "log_issue_time" | "log_compression_cpus"
        | "log_alternate_epoch" | "log_alternate_epoch_clock_id" | "bwavgtime" | "iopsavgtime"
        | "disk_util" | "gtod_cpu" | "job_start_clock_id" | "block_error_percentiles"
        | "unit_base" => {
            "ssdlab's statistics and time series are its own (--sample-interval, fio-json's layout)"
        }
        "cgroup" | "cgroup_nodelete" | "cgroup_weight" | "uid" | "gid" | "comm"
        | "hugepage-size" | "priohint" | "gpu_dev_id" => {
            "host processes, cgroups, credentials and memory placement are not modelled"
        }
        "exec_prerun" | "exec_postrun" => "a simulation runs no commands before or after a job",
        _ => return None,
    })
}
