//! `run --nodes 3 --launcher slurm` on a real Slurm cluster: three nodes on
//! this machine (`lg1`–`lg3`, one slurmd each on its own port, one CPU
//! each), with the test's own munge key and slurm.conf in a scratch
//! directory, against a scratch PostgreSQL server. One run is merged from
//! three shards on the three nodes, started at the coordinator's instant
//! (each one's skew measured and printed; how small it is on an idle
//! machine is bench/nodes.py's figure); then a node is lost mid-run (its slurmd and its
//! worker killed) and the run is reported partial, naming that shard,
//! with a non-zero exit status.
//!
//! Slurm (Debian's `slurm-wlm`) is installed with apt-get when missing;
//! that and the daemons need root, so elsewhere the test says it is
//! skipped and why. The daemons are started by their pids and stopped by
//! them, also when the test fails (a guard's `Drop`).

mod util;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use util::nodes::{check_merged, finish, spawn, workers};
use util::{dbsweep, read_json, Dir, Server};

const NODES: [&str; 3] = ["lg1", "lg2", "lg3"];

#[test]
fn three_slurm_nodes_run_one_merged_run_and_a_lost_node_makes_it_partial() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the Slurm test: installing Slurm and running its daemons needs root");
        return;
    }
    install_slurm();
    let cluster = Cluster::start();
    let conf = cluster.conf.display().to_string();
    let env = [("SLURM_CONF", conf.as_str())];
    let pg = Server::start("postgres", &[]);
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &pg.url,
        "--table-size",
        "1000",
    ])
    .ok();
    let dir = Dir::new();
    let json = dir.join("slurm.json");
    let run = |time: &str, json: Option<&Path>| {
        let mut args = vec![
            "run",
            "oltp_point_select",
            "--db",
            pg.url.as_str(),
            "--threads",
            "6",
            "--time",
            time,
            "--nodes",
            "3",
            "--launcher",
            "slurm",
        ];
        if let Some(j) = json {
            args.extend(["--json", j.to_str().unwrap()]);
        }
        spawn(&args, &env)
    };

    let r = finish(run("3", Some(json.as_path())));
    r.expect_status(0);
    let doc = read_json(&json);
    let rows = check_merged(&doc, 3, "slurm");
    let nodes: BTreeSet<&str> = rows.iter().map(|x| x["node"].as_str().unwrap()).collect();
    assert_eq!(
        nodes,
        NODES.into_iter().collect::<BTreeSet<_>>(),
        "one shard per node"
    );
    // The figures docs/distributed.md quotes.
    for x in &rows {
        eprintln!(
            "slurm shard {} on {}: clock offset {:.3} ms (round trip {:.3} ms), start skew {:.3} ms, {} transactions",
            x["index"],
            x["node"],
            x["clock_offset_s"].as_f64().unwrap() * 1e3,
            x["clock_rtt_s"].as_f64().unwrap() * 1e3,
            x["start_skew_s"].as_f64().unwrap() * 1e3,
            x["transactions"]
        );
    }
    eprintln!(
        "slurm run of 3 s took {:.2} s from the command to its exit",
        r.elapsed.as_secs_f64()
    );

    // A node lost mid-run: its slurmd and the worker it runs die at once.
    let lost = run("6", None);
    let until = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        let ours: Vec<(u32, String)> = workers()
            .into_iter()
            .filter(|(_, _, e)| e.contains(&format!("SLURM_CONF={conf}")))
            .filter_map(|(pid, _, e)| {
                let node = e
                    .split(' ')
                    .find_map(|kv| kv.strip_prefix("SLURMD_NODENAME="))?;
                Some((pid, node.to_string()))
            })
            .collect();
        if ours.len() == 3 {
            break ours
                .into_iter()
                .find(|(_, n)| n == "lg2")
                .expect("a worker on lg2")
                .0;
        }
        assert!(
            Instant::now() < until,
            "the three workers did not start under Slurm"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(2500));
    cluster.kill_node("lg2");
    // SAFETY: kill(2) on the pid of the worker srun started on lg2.
    unsafe { libc::kill(victim as libc::pid_t, libc::SIGKILL) };
    let r = finish(lost);
    assert_ne!(
        r.status, 0,
        "a partial run exits non-zero\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stdout.contains("PARTIAL RUN: 1 of 3 shards"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("  lg2  "))
        .expect("lg2's shard is named");
    assert!(line.contains("FAILED"), "{line}");
    assert!(
        r.stderr.contains("partial run: shard") && r.stderr.contains("(lg2)"),
        "{}",
        r.stderr
    );
    eprintln!("partial run took {:.2} s", r.elapsed.as_secs_f64());
}

/// Installs Debian's Slurm (and munge) unless slurmctld is there.
fn install_slurm() {
    if Path::new("/usr/sbin/slurmctld").exists() {
        return;
    }
    let apt = |args: &[&str]| {
        let ok = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "apt-get {} failed", args.join(" "));
    };
    apt(&["update"]);
    apt(&["install", "-y", "--no-install-recommends", "slurm-wlm"]);
}

/// munged, slurmctld and three slurmd, configured in a scratch directory
/// and stopped by their pids when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    /// Each daemon's name and process.
    daemons: Vec<(String, Child)>,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("dbsweep-slurm-")
            .tempdir()
            .unwrap()
            .keep();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let conf = dir.join("slurm.conf");
        let mut c = Cluster {
            dir: dir.clone(),
            conf: conf.clone(),
            daemons: Vec::new(),
        };
        let key = dir.join("munge.key");
        // munged wants a key of random bytes, readable by its owner only.
        let mut random = vec![0u8; 1024];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut random)
            .unwrap();
        std::fs::write(&key, &random).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        let socket = dir.join("munge.socket");
        let d = |f: &str| dir.join(f).display().to_string();
        c.daemon(
            "munged",
            Command::new("munged").args([
                "--foreground".to_string(),
                "--force".to_string(),
                format!("--key-file={}", d("munge.key")),
                format!("--socket={}", socket.display()),
                format!("--pid-file={}", d("munged.pid")),
                format!("--log-file={}", d("munged.log")),
                format!("--seed-file={}", d("munged.seed")),
            ]),
        );
        c.wait_for("munged's socket", || socket.exists());
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        for n in NODES {
            std::fs::create_dir_all(dir.join(format!("spool-{n}"))).unwrap();
        }
        let nodes: String = NODES
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "NodeName={n} NodeAddr=127.0.0.1 Port={} CPUs=1 State=UNKNOWN\n",
                    17001 + i
                )
            })
            .collect();
        let text = format!(
            "ClusterName=dbsweep
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort=17000
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
StateSaveLocation={state}
SlurmdSpoolDir={dir}/spool-%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd-%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=5
{nodes}PartitionName=lg Nodes=lg[1-3] Default=YES MaxTime=INFINITE State=UP
",
            host = host.trim(),
            socket = socket.display(),
            state = d("state"),
            dir = dir.display(),
        );
        std::fs::write(&conf, text).unwrap();
        let conf_s = conf.display().to_string();
        c.daemon(
            "slurmctld",
            Command::new("slurmctld").args(["-D", "-c", "-f", conf_s.as_str()]),
        );
        for n in NODES {
            c.daemon(
                n,
                Command::new("slurmd").args(["-D", "-N", n, "-f", conf_s.as_str()]),
            );
        }
        c.wait_for("three idle Slurm nodes", || {
            let out = Command::new("sinfo")
                .args(["-h", "-N", "-o", "%N %t"])
                .env("SLURM_CONF", &conf)
                .output();
            // `idle*` would be a node that stopped answering.
            out.is_ok_and(|o| {
                let text = String::from_utf8_lossy(&o.stdout);
                text.lines()
                    .filter(|l| l.trim_end().ends_with(" idle"))
                    .count()
                    == 3
            })
        });
        c
    }

    /// Starts a daemon in the foreground, its output in `NAME.out`.
    fn daemon(&mut self, name: &str, cmd: &mut Command) {
        let out = std::fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.daemons.push((name.to_string(), child));
    }

    /// Waits up to 60 s for `ready`, failing with the daemons' logs.
    fn wait_for(&mut self, what: &str, ready: impl Fn() -> bool) {
        let until = Instant::now() + Duration::from_secs(60);
        while !ready() {
            let exited = self.daemons.iter_mut().find_map(|(name, child)| {
                let status = child.try_wait().ok()??;
                Some(format!("{name} exited ({status})"))
            });
            if let Some(e) = exited {
                panic!("{e} while waiting for {what}:\n{}", self.logs());
            }
            assert!(
                Instant::now() < until,
                "no {what} after 60 s:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The tail of every daemon's output and log, for a failure's message.
    fn logs(&self) -> String {
        let mut out = String::new();
        let mut names: Vec<_> = std::fs::read_dir(&self.dir).unwrap().flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".out") || name.ends_with(".log") {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                out += &format!("--- {name}\n");
                for l in tail.into_iter().rev() {
                    out += &format!("{l}\n");
                }
            }
        }
        out
    }

    /// SIGKILLs node `name`'s slurmd, as if its machine had gone.
    fn kill_node(&self, name: &str) {
        let (_, child) = self.daemons.iter().find(|(n, _)| n == name).unwrap();
        // SAFETY: kill(2) on the pid of a daemon this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The nodes first, munged last (the others talk to it to stop).
        for (_, child) in self.daemons.iter_mut().rev() {
            // SAFETY: kill(2) on the pid of a daemon this test started.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let until = Instant::now() + Duration::from_secs(5);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        // A lost node's step daemon may outlive its slurmd: stop those of
        // this cluster (they carry its SLURM_CONF), by their pids.
        let ours = format!("SLURM_CONF={}", self.conf.display());
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if comm.trim() == "slurmstepd" && String::from_utf8_lossy(&env).contains(&ours) {
                // SAFETY: kill(2) on a step daemon of the cluster this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
