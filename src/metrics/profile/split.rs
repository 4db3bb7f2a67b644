//! A whole-machine recording's `perf script` text, sorted: the samples of
//! the measured window that belong to the server's process tree and those
//! of this process, each as `perf script` text again, for folding.
//!
//! The server's tree is read from perf's own fork events (`--show-task-
//! events`: the ones perf synthesizes for every process when it starts,
//! then each fork as it happens), so a process forked during the run — a
//! backend, a parallel query worker — is the server's from its first
//! sample. Edges are gathered over the whole text before the tree is
//! walked: a process listed before its parent (pids wrap) still counts.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

/// The window's samples: the server's (None when its process is not
/// known) and the client's, as `perf script` text.
#[derive(Debug, Default, PartialEq)]
pub struct Parts {
    pub server: Option<String>,
    pub client: String,
}

/// A sample's header line: (pid, time), from `comm pid/tid [cpu] time:
/// period event:` (a `comm` may hold spaces and slashes, never a
/// `digits/digits` word).
fn header(line: &str) -> Option<(u32, f64)> {
    let mut words = line.split_whitespace();
    let pid = words.find_map(|w| {
        let (pid, tid) = w.split_once('/')?;
        tid.parse::<u32>().ok()?;
        pid.parse::<u32>().ok()
    })?;
    let time = words.find_map(|w| w.strip_suffix(':')?.parse::<f64>().ok())?;
    Some((pid, time))
}

/// A fork event's (child pid, parent pid), from `… PERF_RECORD_FORK(c:t):(p:t)`.
fn fork(line: &str) -> Option<(u32, u32)> {
    let rest = &line[line.find("PERF_RECORD_FORK(")? + "PERF_RECORD_FORK(".len()..];
    let (child, rest) = rest.split_once(':')?;
    let rest = &rest[rest.find("):(")? + 3..];
    let (parent, _) = rest.split_once(':')?;
    Some((child.parse().ok()?, parent.parse().ok()?))
}

/// `root` and every process forked from it, by the `forks` (child →
/// parent) seen.
fn descendants(root: u32, forks: &HashMap<u32, u32>) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&child, &parent) in forks {
        if child != parent {
            children.entry(parent).or_default().push(child);
        }
    }
    let mut tree = HashSet::from([root]);
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if tree.insert(c) {
                todo.push(c);
            }
        }
    }
    tree
}

/// Sorts `script`'s samples taken within `window` (seconds on perf's
/// clock) into the server's tree under `server` and the process `client`.
pub fn split(
    script: impl BufRead,
    window: (f64, f64),
    server: Option<u32>,
    client: u32,
) -> std::io::Result<Parts> {
    let mut forks: HashMap<u32, u32> = HashMap::new();
    let mut client_text = String::new();
    // Other processes' samples of the window, by pid, until the tree is known.
    let mut others: HashMap<u32, String> = HashMap::new();
    // Where the current sample's lines go: None to drop them.
    let mut into: Option<u32> = None;
    for line in script.lines() {
        let line = line?;
        let header_line = !line.is_empty() && !line.starts_with(char::is_whitespace);
        if header_line {
            into = None;
            if line.contains("PERF_RECORD_") {
                if let Some((child, parent)) = fork(&line) {
                    forks.insert(child, parent);
                }
                continue;
            }
            into = header(&line)
                .filter(|&(_, time)| window.0 <= time && time <= window.1)
                .map(|(pid, _)| pid);
        }
        // The sample's header, its frames, and the blank line that ends it.
        if let Some(pid) = into {
            let out = match pid == client {
                true => &mut client_text,
                false => others.entry(pid).or_default(),
            };
            out.push_str(&line);
            out.push('\n');
        }
        if line.is_empty() {
            into = None;
        }
    }
    let server = server.map(|root| {
        let tree = descendants(root, &forks);
        let mut pids: Vec<&u32> = others.keys().filter(|p| tree.contains(p)).collect();
        pids.sort();
        pids.into_iter().map(|p| others[p].as_str()).collect()
    });
    Ok(Parts {
        server,
        client: client_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole-machine recording in `perf script -F comm,pid,tid,cpu,time,
    /// period,event,ip,sym,dso --show-task-events` form: the server's main
    /// process 100 (started by 1), a backend 300 forked from it before the
    /// window and one 50 (pids wrapped) during it, the client 200, and an
    /// unrelated process 400.
    const SCRIPT: &str = "\
systemd     1/1     [000]     0.000000: PERF_RECORD_FORK(300:300):(100:100)
systemd     1/1     [000]     0.000000: PERF_RECORD_FORK(100:100):(1:1)
postgres   300/300  [001]    10.000000:   10101010 cpu-clock: 
\t  1 heap_getnext (/usr/lib/postgresql/15/bin/postgres)

postgres   300/300  [001]    11.000000:   10101010 cpu-clock: 
\t  1 ExecScan (/usr/lib/postgresql/15/bin/postgres)
\t  2 main (/usr/lib/postgresql/15/bin/postgres)

client-0   200/201  [000]    11.500000:   10101010 cpu-clock: 
\t  1 dbsweep::engine::client::Client::run (/usr/bin/dbsweep)

postgres   100/100  [000]    11.600000: PERF_RECORD_FORK(50:50):(100:100)
postgres    50/50   [001]    11.700000:   10101010 cpu-clock: 
\t  1 ParallelWorkerMain (/usr/lib/postgresql/15/bin/postgres)

cron job   400/400  [000]    11.800000:   10101010 cpu-clock: 
\t  1 main (/usr/bin/cron)

client-1   200/202  [000]    13.000000:   10101010 cpu-clock: 
\t  1 dbsweep::engine::client::Client::run (/usr/bin/dbsweep)

";

    #[test]
    fn the_windows_samples_go_to_the_servers_tree_and_the_client() {
        let parts = split(SCRIPT.as_bytes(), (10.5, 12.0), Some(100), 200).unwrap();
        let server = parts.server.unwrap();
        // The backend from before the window, and the one forked in it
        // (pid 50, below its parent's), in pid order; 10.0 is before it.
        assert_eq!(
            server,
            "postgres    50/50   [001]    11.700000:   10101010 cpu-clock: \n\
             \t  1 ParallelWorkerMain (/usr/lib/postgresql/15/bin/postgres)\n\n\
             postgres   300/300  [001]    11.000000:   10101010 cpu-clock: \n\
             \t  1 ExecScan (/usr/lib/postgresql/15/bin/postgres)\n\
             \t  2 main (/usr/lib/postgresql/15/bin/postgres)\n\n"
        );
        // The client's thread 201 in the window; 202 after it.
        assert_eq!(
            parts.client,
            "client-0   200/201  [000]    11.500000:   10101010 cpu-clock: \n\
             \t  1 dbsweep::engine::client::Client::run (/usr/bin/dbsweep)\n\n"
        );
        let folded = super::super::fold::fold(server.as_bytes()).unwrap();
        assert_eq!(
            folded,
            "postgres;ParallelWorkerMain 10101010\npostgres;main;ExecScan 10101010\n"
        );
    }

    #[test]
    fn without_a_server_process_only_the_client() {
        let parts = split(SCRIPT.as_bytes(), (0.0, 100.0), None, 200).unwrap();
        assert_eq!(parts.server, None);
        assert_eq!(parts.client.matches("cpu-clock").count(), 2);
        assert_eq!(
            header("cron job   400/400  [000]    11.800000:   1 cpu-clock:"),
            Some((400, 11.8))
        );
        assert_eq!(
            header("kworker/0:1  7/7 [000] 1.5: 1 cpu-clock:"),
            Some((7, 1.5))
        );
        assert_eq!(
            fork("x 1/1 [000] 0.0: PERF_RECORD_FORK(12:13):(4:4)"),
            Some((12, 4))
        );
        assert_eq!(fork("x 1/1 [000] 0.0: PERF_RECORD_COMM: x:1/1"), None);
    }
}
