//! How a coordinator starts its workers: N processes of this program on
//! this machine (`local`), one task per node through Slurm's `srun`
//! (`slurm`), or nothing — someone else starts them, a Kubernetes Indexed
//! Job say (`external`). Every worker runs `dbsweep worker --coordinator
//! HOST:PORT`; the launcher's processes are watched so a launcher that
//! fails before its workers connect is reported, and stopped by their pid
//! when the run is over.
//!
//! The launcher's processes get a process group of their own, so Ctrl-C
//! at the terminal reaches the coordinator alone: it asks each worker to
//! stop early over the protocol and collects what they measured. A second
//! Ctrl-C exits at once, after [`stop_all`] has stopped every launcher
//! process still running, so none is left behind.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::UsageError;

/// How the workers are started (`run --launcher`, a study's `launcher`,
/// which refuses `external`: no one would start them at each point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Launcher {
    #[default]
    Local,
    Slurm,
    External,
}

impl Launcher {
    /// The name `--launcher` and a study file take, and the record keeps.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Local => "local",
            Launcher::Slurm => "slurm",
            Launcher::External => "external",
        }
    }

    /// The launcher of `--launcher NAME`.
    pub fn parse(name: &str) -> Option<Launcher> {
        [Launcher::Local, Launcher::Slurm, Launcher::External]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

/// The processes a launcher started.
pub struct Launched {
    /// What each is, for messages, and the process.
    children: Vec<(String, Child)>,
}

/// Starts `n` workers of `launcher` that connect to `coordinator`.
pub fn launch(launcher: Launcher, n: usize, coordinator: &str) -> anyhow::Result<Launched> {
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("Could not find this program's path to start workers: {e}"))?;
    let worker = |cmd: &mut Command| {
        cmd.arg("worker")
            .args(["--coordinator", coordinator])
            // A worker prints nothing on stdout; its errors go to stderr,
            // which is the coordinator's.
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            // Out of the terminal's process group: the coordinator
            // forwards Ctrl-C (see the module's documentation).
            .process_group(0);
    };
    let mut children: Vec<(String, Child)> = Vec::new();
    match launcher {
        Launcher::Local => {
            for i in 0..n {
                let mut cmd = Command::new(&exe);
                worker(&mut cmd);
                cmd.arg("--shard-index").arg(i.to_string());
                let child = match cmd.spawn() {
                    Ok(c) => c,
                    Err(e) => {
                        // The ones started would wait for a coordinator
                        // that is not coming.
                        for (_, mut c) in children {
                            let _ = c.kill();
                            let _ = c.wait();
                        }
                        anyhow::bail!("Could not start worker {i} ({}): {e}", exe.display());
                    }
                };
                children.push((format!("local worker {i}"), child));
            }
        }
        Launcher::Slurm => {
            // One task per node; the binary's path must be the same on
            // every node (a shared file system, or the same install).
            let n = n.to_string();
            let mut cmd = Command::new("srun");
            cmd.args(["-N", n.as_str(), "-n", n.as_str(), "--ntasks-per-node=1"])
                .arg(&exe);
            worker(&mut cmd);
            let child = cmd.spawn().map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    anyhow::Error::from(UsageError(
                        "--launcher slurm runs `srun`, which is not on PATH: run on a Slurm login node (or use --launcher local or external)".into(),
                    ))
                } else {
                    anyhow::anyhow!("Could not start srun: {e}")
                }
            })?;
            children.push(("srun".to_string(), child));
        }
        Launcher::External => {}
    }
    let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    for (what, c) in &children {
        // A local worker is stopped by killing it; `srun` by SIGTERM,
        // which it passes on to its tasks on the other nodes (killed, it
        // would leave them running).
        let signal = if what == "srun" {
            libc::SIGTERM
        } else {
            libc::SIGKILL
        };
        running.push((c.id(), signal));
    }
    Ok(Launched { children })
}

/// The launcher processes of the runs going on: their pids, and the
/// signal that stops each at once.
static RUNNING: Mutex<Vec<(u32, libc::c_int)>> = Mutex::new(Vec::new());

/// `child`'s exit status once it has ended, reaped, and off the list
/// [`stop_all`] signals in the same step (under its lock), so that never
/// signals a pid this process no longer owns.
fn try_wait(child: &mut Child) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    let status = child.try_wait();
    if matches!(status, Ok(Some(_))) {
        let pid = child.id();
        running.retain(|(p, _)| *p != pid);
    }
    status
}

/// Stops every launcher process still running, at once: a second Ctrl-C
/// exits without waiting for the workers' records, and leaves none of
/// them running.
pub fn stop_all() {
    let running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    for &(pid, signal) in running.iter() {
        // SAFETY: kill(2) on a child of this process not reaped yet: a
        // child leaves this list under this lock as it is reaped
        // (`try_wait`).
        unsafe { libc::kill(pid as libc::pid_t, signal) };
    }
}

impl Launched {
    /// A launcher process that has ended, with how; None while all run
    /// (or with none started). Asked before the run starts, when a
    /// launcher gone means workers that will never connect.
    pub fn ended(&mut self) -> Option<String> {
        self.children
            .iter_mut()
            .find_map(|(what, c)| match try_wait(c) {
                Ok(Some(status)) => Some(format!("{what} ended ({status})")),
                _ => None,
            })
    }

    /// Waits up to `grace` for the launcher's processes to end (workers
    /// exit once their record is sent), then stops what is left by its
    /// pid: SIGTERM, and SIGKILL a second later. `srun` may wait for a lost
    /// node's task for minutes; the coordinator has its answer already.
    pub fn finish(&mut self, grace: Duration) {
        let until = Instant::now() + grace;
        while Instant::now() < until && self.running() {
            std::thread::sleep(Duration::from_millis(50));
        }
        for signal in [libc::SIGTERM, libc::SIGKILL] {
            let mut any = false;
            for (_, c) in &mut self.children {
                if matches!(try_wait(c), Ok(None)) {
                    any = true;
                    // SAFETY: kill(2) on our own child's pid, not yet reaped.
                    unsafe { libc::kill(c.id() as libc::pid_t, signal) };
                }
            }
            if !any {
                break;
            }
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until && self.running() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for (_, c) in &mut self.children {
            let _ = try_wait(c);
        }
    }

    /// True while some process is still running.
    fn running(&mut self) -> bool {
        self.children
            .iter_mut()
            .any(|(_, c)| matches!(try_wait(c), Ok(None)))
    }
}
