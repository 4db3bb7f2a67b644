//! `perf script`'s text → folded stacks, and the figures a record keeps
//! from them.
//!
//! Folding is inferno's perf collapser (the one `inferno-collapse-perf`
//! and cargo-flamegraph use), with kernel frames marked `_[k]` so the
//! kernel's share can be read from the folded text alone. The figures are
//! counted here: each line of folded text is `root;…;leaf COUNT`, the root
//! the thread's name, the leaf the function on the CPU, the count the CPU
//! time in nanoseconds its samples stand for (the collapser adds up perf's
//! period of each sample: in frequency mode the kernel varies the period
//! to keep the rate, so counting samples would weigh them unequally).

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

use crate::record::profile::{Profile, TopFunction};

/// How many functions a record names.
pub const TOP: usize = 15;

/// Folds `perf script`'s output.
pub fn fold(script: impl BufRead) -> std::io::Result<String> {
    let mut opts = Options::default();
    opts.annotate_kernel = true;
    opts.nthreads = 1;
    let mut out = Vec::new();
    Folder::from(opts).collapse(script, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// What a record keeps of a profile's folded stacks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// Nanoseconds of CPU time, all stacks.
    pub ns: u64,
    pub kernel_share: f64,
    pub unnamed_share: f64,
    /// The `top` functions by their own share.
    pub top: Vec<TopFunction>,
}

/// One line of folded text: its frames (root first) and its count.
pub fn line(text: &str) -> Option<(Vec<&str>, u64)> {
    let (stack, count) = text.trim_end().rsplit_once(' ')?;
    let count = count.parse().ok()?;
    Some((stack.split(';').collect(), count))
}

/// A frame perf could not name: inferno writes the object's name in
/// brackets (`[mariadbd]`, `[libc.so.6]`) or `[unknown]`.
pub fn unnamed(frame: &str) -> bool {
    let f = frame.strip_suffix("_[k]").unwrap_or(frame);
    f.starts_with('[') && f.ends_with(']')
}

/// Each function's own count in `folded`: the lines' counts by their
/// innermost frame (a stack of the thread's name alone has none).
pub fn own(folded: &str) -> HashMap<&str, u64> {
    let mut own: HashMap<&str, u64> = HashMap::new();
    for (frames, count) in folded.lines().filter_map(line) {
        if let Some(leaf) = frames.get(1..).and_then(|f| f.last()) {
            *own.entry(leaf).or_default() += count;
        }
    }
    own
}

/// The figures of `folded`, naming its `top` functions.
pub fn summary(folded: &str, top: usize) -> Summary {
    let (mut ns, mut kernel, mut unnamed_n) = (0u64, 0u64, 0u64);
    let mut total: HashMap<&str, u64> = HashMap::new();
    for (frames, count) in folded.lines().filter_map(line) {
        ns += count;
        // The root is the thread's name, not a function.
        let functions = frames.get(1..).unwrap_or_default();
        let Some(leaf) = functions.last().copied() else {
            continue;
        };
        if leaf.ends_with("_[k]") {
            kernel += count;
        }
        if unnamed(leaf) {
            unnamed_n += count;
        }
        // A recursive function counts once per stack.
        let on_stack: HashSet<&str> = functions.iter().copied().collect();
        for f in on_stack {
            *total.entry(f).or_default() += count;
        }
    }
    let share = |n: u64| {
        if ns == 0 {
            0.0
        } else {
            n as f64 / ns as f64
        }
    };
    let mut ranked: Vec<(&str, u64)> = own(folded).into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    Summary {
        ns,
        kernel_share: share(kernel),
        unnamed_share: share(unnamed_n),
        top: ranked
            .into_iter()
            .take(top)
            .map(|(f, n)| TopFunction {
                function: f.to_string(),
                self_share: share(n),
                total_share: share(total.get(f).copied().unwrap_or(n)),
            })
            .collect(),
    }
}

/// Folded stacks summed line by line, in the stacks' order.
pub fn summed(all: &[&str]) -> String {
    let mut sum: HashMap<&str, u64> = HashMap::new();
    for l in all.iter().flat_map(|f| f.lines()) {
        if let Some((stack, n)) =
            (l.rsplit_once(' ')).and_then(|(s, n)| Some((s, n.parse::<u64>().ok()?)))
        {
            *sum.entry(stack).or_default() += n;
        }
    }
    let mut lines: Vec<(&str, u64)> = sum.into_iter().collect();
    lines.sort();
    lines.iter().map(|(s, n)| format!("{s} {n}\n")).collect()
}

/// One profile of several processes of one role (the clients of a run's
/// shards): their stacks summed and its figures read again from the sum;
/// None when there are none, or one of them lends no stacks (a record
/// read back from a file): a sum of their figures alone would name the
/// wrong top functions.
pub fn pooled(parts: &[&Profile]) -> Option<Profile> {
    let first = parts.first()?;
    let texts: Option<Vec<&str>> = parts.iter().map(|p| p.folded.as_deref()).collect();
    let folded = summed(&texts?);
    Some(profile(&first.role, first.hz, &first.call_graph, folded))
}

/// A record's profile of `folded`: its figures read from the stacks,
/// which it keeps.
pub fn profile(role: &str, hz: u32, call_graph: &str, folded: String) -> Profile {
    let s = summary(&folded, TOP);
    Profile {
        role: role.to_string(),
        hz,
        call_graph: call_graph.to_string(),
        cpu_s: s.ns as f64 / 1e9,
        kernel_share: s.kernel_share,
        unnamed_share: s.unnamed_share,
        top: s.top,
        file: None,
        folded: Some(folded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two samples of `perf script`'s default output, as perf 6.1 prints
    /// them: a client thread in the kernel under rustls, and one in user
    /// space without a symbol.
    const SCRIPT: &str = "\
client-1 15721 14103.959856:   10101010 cpu-clock: 
\tffffffff8206d66b tcp_sendmsg+0x2b ([kernel.kallsyms])
\tffffffff8225a101 do_syscall_64+0x71 ([kernel.kallsyms])
\t           fde9d __GI___writev+0x4d (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          cf765a rustls::vecbuf::ChunkVecBuffer::write_to+0x24a (/work/main/target/release/dbsweep)

client-2 15722 14103.975004:   10101010 cpu-clock: 
\t          5b5ef1 [unknown] (/usr/sbin/mariadbd)

client-1 15721 14103.969856:   10101010 cpu-clock: 
\tffffffff8206d66b tcp_sendmsg+0x2b ([kernel.kallsyms])
\tffffffff8225a101 do_syscall_64+0x71 ([kernel.kallsyms])
\t           fde9d __GI___writev+0x4d (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          cf765a rustls::vecbuf::ChunkVecBuffer::write_to+0x24a (/work/main/target/release/dbsweep)

";

    #[test]
    fn perf_script_folds_into_stacks_weighed_by_cpu_time_with_kernel_frames_marked() {
        let folded = fold(SCRIPT.as_bytes()).unwrap();
        let lines: Vec<&str> = folded.lines().collect();
        assert_eq!(
            lines,
            [
                "client-1;rustls::vecbuf::ChunkVecBuffer::write_to;__GI___writev;do_syscall_64_[k];tcp_sendmsg_[k] 20202020",
                "client-2;[mariadbd] 10101010",
            ],
            "{folded}"
        );
    }

    #[test]
    fn the_summary_counts_shares_of_samples() {
        let folded = "postgres;main;ExecScan;heap_getnext 6\n\
                      postgres;main;ExecScan;ExecScan;tcp_sendmsg_[k] 3\n\
                      postgres;[postgres] 1\n";
        let s = summary(folded, 2);
        assert_eq!(s.ns, 10);
        assert_eq!(s.kernel_share, 0.3);
        assert_eq!(s.unnamed_share, 0.1);
        assert_eq!(
            s.top,
            [
                TopFunction {
                    function: "heap_getnext".into(),
                    self_share: 0.6,
                    total_share: 0.6
                },
                TopFunction {
                    function: "tcp_sendmsg_[k]".into(),
                    self_share: 0.3,
                    total_share: 0.3
                },
            ]
        );
        // ExecScan twice on one stack counts once: 9 of 10 samples.
        let all = summary(folded, 10);
        assert!(all.top.iter().all(|t| t.function != "ExecScan"));
        assert_eq!(summary("", 3), Summary::default());
        assert_eq!(line("a;b 12"), Some((vec!["a", "b"], 12)));
        assert_eq!(line("a;b x"), None);
    }

    #[test]
    fn pooled_profiles_sum_their_stacks_and_read_their_figures_again() {
        let part = |folded: &str| Profile {
            role: "client".into(),
            hz: 99,
            call_graph: "fp".into(),
            cpu_s: 0.0,
            kernel_share: 0.0,
            unnamed_share: 0.0,
            top: Vec::new(),
            file: None,
            folded: Some(folded.into()),
        };
        let (a, b) = (
            part("client-1;encode 3000000000\nclient-1;send_[k] 1000000000\n"),
            part("client-2;encode 1000000000\nclient-1;send_[k] 1000000000\n"),
        );
        let p = pooled(&[&a, &b]).unwrap();
        assert_eq!(
            p.folded.as_deref(),
            Some(
                "client-1;encode 3000000000\nclient-1;send_[k] 2000000000\n\
                 client-2;encode 1000000000\n"
            )
        );
        assert_eq!(p.cpu_s, 6.0);
        assert_eq!(p.kernel_share, 2.0 / 6.0);
        assert_eq!(p.top[0].function, "encode");
        assert_eq!(p.top[0].self_share, 4.0 / 6.0);
        // A part without its stacks: no pooled profile.
        let bare = Profile {
            folded: None,
            ..a.clone()
        };
        assert_eq!(pooled(&[&a, &bare]), None);
        assert_eq!(pooled(&[]), None);
    }
}
