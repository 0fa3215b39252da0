//! How much of the CPU other programs want, so the engine takes only the cores
//! it will actually get (issue 30).
//!
//! ggml's threads meet at a barrier after every operation. A thread that has
//! to share its core with another program stalls all the others: measured on
//! this 2-core machine beside one busy core (docs/benchmarks.md), two engine
//! threads took 3.2× their idle time and one thread 1.4×. So the engine runs
//! with the cores left over by the rest of the machine, re-chosen before each
//! engine call.
//!
//! A watcher thread samples the CPU time counters of the CPUs this process may
//! run on, and this process's own CPU time, a few times a second. What the
//! others used is the difference. While the engine computes and the cores are
//! all taken, the others only got a fair share of them, not what they wanted:
//! the scheduler gives each runnable thread an equal slice, so they wanted
//! `their use × our threads / our use` threads' worth. Niced work counts as
//! competing: with the per-session scheduler groups (autogroup) and per-app
//! cgroups of desktop Linux, a `nice 19` build in another terminal gets its
//! full share (measured: as slow as an un-niced loop).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the watcher reads the counters.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);
/// The first reading comes sooner, so the engine's first session (made
/// while the model loads) is already fitted: 15 clock ticks per core.
const FIRST_SAMPLE: Duration = Duration::from_millis(150);
/// How fast the estimate follows a change (the time constant of its moving
/// average): a build that starts is seen within about a second, a short burst
/// (a page load) is mostly smoothed away.
const FOLLOW: Duration = Duration::from_secs(1);
/// Idle capacity (in cores) below which the cores count as all taken.
const SATURATED_BELOW: f64 = 0.2;
/// How far the ideal thread count must be from the current one before the
/// engine changes (each change rebuilds the engine's session, ~ms).
const HYSTERESIS: f64 = 0.6;

/// CPU time used up to one moment, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counters {
    /// Busy time (user, system, interrupts, stolen; niced included) summed
    /// over the CPUs this process may run on.
    pub busy_s: f64,
    /// This process's own CPU time (all threads).
    pub own_s: f64,
}

/// Why the machine's load cannot be watched: the engine then keeps its
/// thread count whatever else runs.
#[derive(Debug, thiserror::Error)]
pub enum CpuLoadError {
    #[error("the CPU time counters cannot be read")]
    Unreadable,
    #[error("cannot start the load watcher: {0}")]
    Thread(#[source] std::io::Error),
    #[error("the kernel's clock tick is unknown")]
    ClockTickUnknown,
    #[error("the CPU affinity cannot be read: {0}")]
    Affinity(#[source] std::io::Error),
    #[error("the CPU affinity is empty")]
    NoCpus,
    /// A CPU quota (a container limited to fewer CPUs than it sees) is not
    /// load, so the load is not read there.
    #[error("this process may use {allowed} of {cpus} CPUs (a cgroup quota)")]
    Quota { allowed: usize, cpus: usize },
    #[error("this system's CPU load is not read")]
    Unsupported,
}

/// Where the counters come from: the OS, or a test's script.
pub trait CounterSource: Send + 'static {
    /// The counters now; `None` when they cannot be read.
    fn read(&mut self) -> Option<Counters>;
}

/// How many cores' worth of work other programs wanted over one interval.
///
/// `cores`: the CPUs this process may use; `elapsed_s`: the interval;
/// `engine_threads`: the threads the engine computed with during it (0 when
/// it was idle throughout).
pub fn others_demand(
    before: Counters,
    after: Counters,
    elapsed_s: f64,
    cores: usize,
    engine_threads: usize,
) -> f64 {
    if elapsed_s <= 0.0 {
        return 0.0;
    }
    let own = ((after.own_s - before.own_s) / elapsed_s).max(0.0);
    let busy = ((after.busy_s - before.busy_s) / elapsed_s).max(0.0);
    let others = (busy - own).max(0.0);
    let idle = cores as f64 - busy;
    let demand = if engine_threads == 0 || idle > SATURATED_BELOW || own < 0.05 {
        // Cores were free (or we were not competing): the others got all they wanted.
        others
    } else {
        // Fair shares: `others / (own / threads)` threads' worth.
        others * engine_threads as f64 / own
    };
    demand.clamp(0.0, cores as f64)
}

/// The thread count to use: the cores left over, at least one and at most
/// `max`, changed only when the ideal is clearly away from `current`.
pub fn fit_threads(max: usize, demand: f64, current: usize) -> usize {
    let max = max.max(1);
    let ideal = (max as f64 - demand).clamp(1.0, max as f64);
    if (ideal - current as f64).abs() < HYSTERESIS {
        return current.clamp(1, max);
    }
    (ideal.round() as usize).clamp(1, max)
}

/// One line for `utter doctor`: the engine's threads, and what they would
/// be now (the load measured over `over`).
pub fn describe_threads(over: Duration) -> String {
    let max = match super::cpu::Threads::from_setting(0) {
        super::cpu::Threads::Fixed(n) => {
            return format!("{n} (fixed by {})", super::cpu::FIXED_THREADS_ENV)
        }
        super::cpu::Threads::FitToLoad { max } => max,
    };
    if max < 2 {
        return "1 (this process may use one core)".into();
    }
    let measured = system::Source::new().and_then(|mut source| {
        let before = source.read().ok_or(CpuLoadError::Unreadable)?;
        let started = Instant::now();
        std::thread::sleep(over);
        let after = source.read().ok_or(CpuLoadError::Unreadable)?;
        let elapsed = started.elapsed().as_secs_f64();
        Ok(others_demand(before, after, elapsed, source.cores(), 0))
    });
    match measured {
        Ok(demand) => format!(
            "up to {max}, fewer while other programs keep cores busy: {} now \
             ({demand:.1} cores busy elsewhere)",
            fit_threads(max, demand, max)
        ),
        Err(why) => format!("{max} whatever else runs ({why})"),
    }
}

/// The watcher's shared state: the smoothed demand and what the engine is doing.
struct Shared {
    /// f64 bits; NaN until the first interval has been measured.
    demand_bits: AtomicU64,
    /// The engine's threads while it computes, else 0.
    computing: AtomicUsize,
    /// The engine's threads if it computed at any time since the last
    /// sample (a short run between two samples still counts), else 0.
    computed_since_sample: AtomicUsize,
    stop: AtomicBool,
}

/// Watches the machine's load from a thread of its own; dropping it stops the thread.
pub struct LoadWatch {
    shared: Arc<Shared>,
    cores: usize,
}

impl LoadWatch {
    /// Starts watching the CPUs this process may use, or says why it cannot.
    pub fn start() -> Result<Self, CpuLoadError> {
        let source = system::Source::new()?;
        let cores = source.cores();
        Self::with_source(source, cores)
    }

    /// Starts watching `cores` CPUs through `source`.
    pub fn with_source(mut source: impl CounterSource, cores: usize) -> Result<Self, CpuLoadError> {
        let first = source.read().ok_or(CpuLoadError::Unreadable)?;
        let shared = Arc::new(Shared {
            demand_bits: AtomicU64::new(f64::NAN.to_bits()),
            computing: AtomicUsize::new(0),
            computed_since_sample: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let watched = shared.clone();
        std::thread::Builder::new()
            .name("utter-load".into())
            .spawn(move || watch(source, first, cores, &watched))
            .map_err(CpuLoadError::Thread)?;
        Ok(Self { shared, cores })
    }

    /// Cores' worth of work other programs want now (smoothed; 0 before
    /// the first reading).
    pub fn others_demand(&self) -> f64 {
        self.measured_demand().unwrap_or(0.0)
    }

    /// Like [`Self::others_demand`], after waiting for the first reading
    /// (at most a moment: [`FIRST_SAMPLE`] after the start).
    pub fn others_demand_measured(&self) -> f64 {
        let deadline = Instant::now() + FIRST_SAMPLE * 3;
        while self.measured_demand().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.others_demand()
    }

    fn measured_demand(&self) -> Option<f64> {
        let demand = f64::from_bits(self.shared.demand_bits.load(Ordering::Acquire));
        (!demand.is_nan()).then_some(demand)
    }

    /// The CPUs watched.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// What marks the engine's calls for this watcher.
    pub fn marker(&self) -> Marker {
        Marker(self.shared.clone())
    }
}

/// Tells the watcher when the engine computes (its own CPU time then is not
/// the others' load, and its threads compete for the cores).
#[derive(Clone)]
pub struct Marker(Arc<Shared>);

impl Marker {
    /// Marks the engine computing with `threads` threads until the guard drops.
    pub fn computing(&self, threads: usize) -> Computing {
        self.0.computing.store(threads, Ordering::Relaxed);
        self.0
            .computed_since_sample
            .store(threads, Ordering::Relaxed);
        Computing(self.0.clone())
    }
}

impl Drop for LoadWatch {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

/// While alive, the watcher counts the engine as computing.
pub struct Computing(Arc<Shared>);

impl Drop for Computing {
    fn drop(&mut self) {
        self.0.computing.store(0, Ordering::Relaxed);
    }
}

fn watch(mut source: impl CounterSource, mut last: Counters, cores: usize, shared: &Shared) {
    let mut last_at = Instant::now();
    let mut smoothed: Option<f64> = None;
    while !shared.stop.load(Ordering::Relaxed) {
        std::thread::sleep(match smoothed {
            None => FIRST_SAMPLE,
            Some(_) => SAMPLE_EVERY,
        });
        let Some(now) = source.read() else { continue };
        let now_at = Instant::now();
        let elapsed = now_at.duration_since(last_at).as_secs_f64();
        // The threads of a computation during this interval; the next one
        // starts with whatever is still running.
        let still_running = shared.computing.load(Ordering::Relaxed);
        let threads = shared
            .computed_since_sample
            .swap(still_running, Ordering::Relaxed);
        let demand = others_demand(last, now, elapsed, cores, threads);
        let weight = 1.0 - (-elapsed / FOLLOW.as_secs_f64()).exp();
        let next = smoothed.map_or(demand, |s| s + weight * (demand - s));
        smoothed = Some(next);
        shared.demand_bits.store(next.to_bits(), Ordering::Release);
        last = now;
        last_at = now_at;
    }
}

/// This process's own CPU time (all threads), in seconds.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn own_cpu_s() -> Option<f64> {
    // SAFETY: getrusage writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(s(usage.ru_utime) + s(usage.ru_stime))
}

/// The kernel's clock tick in seconds: the unit of its CPU time counters.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn clock_tick_s() -> Result<f64, CpuLoadError> {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    match ticks > 0 {
        true => Ok(1.0 / ticks as f64),
        false => Err(CpuLoadError::ClockTickUnknown),
    }
}

#[cfg(target_os = "linux")]
mod system {
    //! Linux: the `cpuN` lines of /proc/stat for the CPUs in this process's
    //! affinity mask, and getrusage for our own time.
    use super::{clock_tick_s, own_cpu_s, CounterSource, Counters, CpuLoadError};

    pub struct Source {
        cpus: Vec<usize>,
        tick_s: f64,
    }

    impl Source {
        pub fn new() -> Result<Self, CpuLoadError> {
            let cpus = allowed_cpus()?;
            let tick_s = clock_tick_s()?;
            // A CPU quota (a container limited to fewer CPUs than it sees)
            // is not load: the quota-limited count is already the maximum,
            // and the host's other tenants show in these counters.
            let quota = std::thread::available_parallelism().map_or(1, |n| n.get());
            if quota < cpus.len() {
                return Err(CpuLoadError::Quota {
                    allowed: quota,
                    cpus: cpus.len(),
                });
            }
            Ok(Self { cpus, tick_s })
        }

        pub fn cores(&self) -> usize {
            self.cpus.len()
        }
    }

    impl CounterSource for Source {
        fn read(&mut self) -> Option<Counters> {
            let stat = std::fs::read_to_string("/proc/stat").ok()?;
            let busy_ticks = busy_ticks(&stat, &self.cpus)?;
            Some(Counters {
                busy_s: busy_ticks as f64 * self.tick_s,
                own_s: own_cpu_s()?,
            })
        }
    }

    /// The busy ticks of `cpus` in a /proc/stat text: user, nice, system,
    /// irq, softirq and steal (guest time is already inside user).
    pub fn busy_ticks(stat: &str, cpus: &[usize]) -> Option<u64> {
        let mut total = 0;
        let mut seen = 0;
        for line in stat.lines() {
            let mut fields = line.split_ascii_whitespace();
            let Some(id) = fields.next().and_then(|f| f.strip_prefix("cpu")) else {
                continue;
            };
            let Ok(id) = id.parse::<usize>() else {
                continue; // the "cpu" line: all CPUs together
            };
            if !cpus.contains(&id) {
                continue;
            }
            let values: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
            let [user, nice, system, _idle, _iowait, irq, softirq, steal, ..] = values[..] else {
                return None;
            };
            total += user + nice + system + irq + softirq + steal;
            seen += 1;
        }
        (seen == cpus.len()).then_some(total)
    }

    fn allowed_cpus() -> Result<Vec<usize>, CpuLoadError> {
        // SAFETY: sched_getaffinity fills the set it is given, of that size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return Err(CpuLoadError::Affinity(std::io::Error::last_os_error()));
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: the index is below CPU_SETSIZE.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        match cpus.is_empty() {
            true => Err(CpuLoadError::NoCpus),
            false => Ok(cpus),
        }
    }
}

#[cfg(windows)]
mod system {
    //! Windows: GetSystemTimes (all CPUs; its kernel time includes idle) and
    //! GetProcessTimes for our own time, both in 100 ns units.
    use super::{CounterSource, Counters, CpuLoadError};
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, GetProcessTimes, GetSystemTimes,
    };

    pub struct Source {
        cores: usize,
    }

    impl Source {
        pub fn new() -> Result<Self, CpuLoadError> {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            Ok(Self { cores })
        }

        pub fn cores(&self) -> usize {
            self.cores
        }
    }

    fn seconds(t: FILETIME) -> f64 {
        ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as f64 * 1e-7
    }

    impl CounterSource for Source {
        fn read(&mut self) -> Option<Counters> {
            let zero = || FILETIME {
                dwLowDateTime: 0,
                dwHighDateTime: 0,
            };
            let (mut idle, mut kernel, mut user) = (zero(), zero(), zero());
            let (mut created, mut exited, mut own_kernel, mut own_user) =
                (zero(), zero(), zero(), zero());
            // SAFETY: both calls write the FILETIMEs they are given; the
            // current-process pseudo handle needs no closing.
            let ok = unsafe {
                GetSystemTimes(&mut idle, &mut kernel, &mut user) != 0
                    && GetProcessTimes(
                        GetCurrentProcess(),
                        &mut created,
                        &mut exited,
                        &mut own_kernel,
                        &mut own_user,
                    ) != 0
            };
            ok.then(|| Counters {
                busy_s: seconds(kernel) + seconds(user) - seconds(idle),
                own_s: seconds(own_kernel) + seconds(own_user),
            })
        }
    }
}

#[cfg(target_os = "macos")]
mod system {
    //! macOS: the host's CPU load ticks (host_statistics, HOST_CPU_LOAD_INFO)
    //! and getrusage for our own time.
    use super::{clock_tick_s, own_cpu_s, CounterSource, Counters, CpuLoadError};

    pub struct Source {
        host: libc::mach_port_t,
        cores: usize,
        tick_s: f64,
    }

    impl Source {
        pub fn new() -> Result<Self, CpuLoadError> {
            // SAFETY: no preconditions. The host port is kept for the
            // process's life (one send right, never released).
            #[allow(deprecated)]
            let host = unsafe { libc::mach_host_self() };
            let tick_s = clock_tick_s()?;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            Ok(Self {
                host,
                cores,
                tick_s,
            })
        }

        pub fn cores(&self) -> usize {
            self.cores
        }
    }

    // SAFETY: the host port is a process-wide name, usable from any thread.
    unsafe impl Send for Source {}

    impl CounterSource for Source {
        fn read(&mut self) -> Option<Counters> {
            let mut info = libc::host_cpu_load_info {
                cpu_ticks: [0; libc::CPU_STATE_MAX as usize],
            };
            let mut count = libc::HOST_CPU_LOAD_INFO_COUNT;
            // SAFETY: the buffer is a host_cpu_load_info of `count` integers.
            let status = unsafe {
                libc::host_statistics(
                    self.host,
                    libc::HOST_CPU_LOAD_INFO,
                    (&mut info as *mut libc::host_cpu_load_info).cast(),
                    &mut count,
                )
            };
            if status != libc::KERN_SUCCESS {
                return None;
            }
            let ticks = |state: libc::c_int| u64::from(info.cpu_ticks[state as usize]);
            let busy = ticks(libc::CPU_STATE_USER)
                + ticks(libc::CPU_STATE_SYSTEM)
                + ticks(libc::CPU_STATE_NICE);
            Some(Counters {
                busy_s: busy as f64 * self.tick_s,
                own_s: own_cpu_s()?,
            })
        }
    }
}

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
mod system {
    use super::{CounterSource, Counters, CpuLoadError};

    pub struct Source;

    impl Source {
        pub fn new() -> Result<Self, CpuLoadError> {
            Err(CpuLoadError::Unsupported)
        }

        pub fn cores(&self) -> usize {
            1
        }
    }

    impl CounterSource for Source {
        fn read(&mut self) -> Option<Counters> {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(busy_s: f64, own_s: f64) -> Counters {
        Counters { busy_s, own_s }
    }

    #[test]
    fn with_cores_free_the_others_demand_is_what_they_used() {
        // 2 cores, 1 s: one busy loop elsewhere, the engine idle.
        assert!((others_demand(at(0.0, 0.0), at(1.0, 0.0), 1.0, 2, 0) - 1.0).abs() < 1e-9);
        // The engine on one thread beside it: cores all taken, equal shares.
        assert!((others_demand(at(0.0, 0.0), at(2.0, 1.0), 1.0, 2, 1) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn with_cores_all_taken_the_others_demand_is_counted_in_fair_shares() {
        // Two engine threads beside one busy loop on 2 cores: the loop gets
        // 2/3 of a core, the engine 4/3; the loop wanted one whole thread.
        let demand = others_demand(at(0.0, 0.0), at(2.0, 4.0 / 3.0), 1.0, 2, 2);
        assert!((demand - 1.0).abs() < 1e-9, "{demand}");
        // A niced loop in our own scheduler group barely runs: no demand.
        let demand = others_demand(at(0.0, 0.0), at(2.0, 1.98), 1.0, 2, 2);
        assert!(demand < 0.05, "{demand}");
    }

    #[test]
    fn the_thread_count_follows_the_free_cores_with_hysteresis() {
        assert_eq!(fit_threads(2, 0.0, 2), 2);
        assert_eq!(fit_threads(2, 1.0, 2), 1);
        assert_eq!(fit_threads(2, 3.0, 2), 1, "never fewer than one");
        // Half a core busy elsewhere: stay where we are.
        assert_eq!(fit_threads(2, 0.5, 2), 2);
        assert_eq!(fit_threads(2, 0.5, 1), 1);
        assert_eq!(fit_threads(8, 2.2, 8), 6);
        assert_eq!(fit_threads(8, 0.2, 6), 8);
    }

    #[test]
    fn counters_that_cannot_be_read_are_said_so() {
        struct Unreadable;
        impl CounterSource for Unreadable {
            fn read(&mut self) -> Option<Counters> {
                None
            }
        }
        let err = LoadWatch::with_source(Unreadable, 2)
            .err()
            .expect("no watcher without counters");
        assert!(matches!(err, CpuLoadError::Unreadable), "{err:?}");
        assert_eq!(err.to_string(), "the CPU time counters cannot be read");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn busy_ticks_read_the_allowed_cpus_of_proc_stat() {
        let stat = "cpu  10 0 0 0 0 0 0 0 0 0\n\
                    cpu0 1 2 3 100 4 5 6 7 8 9\n\
                    cpu1 10 20 30 100 40 50 60 70 80 90\n\
                    intr 1 2 3\n";
        assert_eq!(system::busy_ticks(stat, &[0]), Some(1 + 2 + 3 + 5 + 6 + 7));
        assert_eq!(system::busy_ticks(stat, &[0, 1]), Some(24 + 240));
        assert_eq!(
            system::busy_ticks(stat, &[2]),
            None,
            "a CPU that is not listed"
        );
    }

    /// The real counters of this machine: a busy loop in another process is
    /// seen as at least most of a core of demand. (Other tests running at the
    /// same time only add to it, so this cannot pass by accident of load.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_busy_process_is_seen_as_demand() {
        let watch = LoadWatch::start().expect("the load watcher starts here");
        let mut spinner = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("sh starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = 0.0;
        while Instant::now() < deadline && seen < 0.8 {
            std::thread::sleep(Duration::from_millis(250));
            seen = watch.others_demand();
        }
        let _ = spinner.kill();
        let _ = spinner.wait();
        assert!(seen >= 0.8, "a busy loop seen as {seen:.2} cores");
        assert!(seen <= watch.cores() as f64);
    }
}
