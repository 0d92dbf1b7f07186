//! Wall and CPU clocks, and the progress bars a person watches while waiting.
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// "12.3 us", "4.56 ms", "7.89 s".
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// CPU time of this thread, so that timings mean something on a loaded
/// machine (std has only wall clocks). None where the clock is missing.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "freebsd"))]
pub fn cpu_time() -> Option<Duration> {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid, exclusive pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    let sec = u64::try_from(t.tv_sec).ok()?;
    let nsec = u32::try_from(t.tv_nsec).ok()?;
    (rc == 0).then(|| Duration::new(sec, nsec))
}

/// CPU time of this thread: not available here.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "freebsd")))]
pub fn cpu_time() -> Option<Duration> {
    None
}

/// Wall and CPU clocks started together.
pub struct Clock {
    /// Start on the wall clock.
    pub wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    /// Starts both clocks.
    pub fn start() -> Clock {
        Clock { wall: Instant::now(), cpu: cpu_time() }
    }
    /// Wall time since the start.
    pub fn wall(&self) -> Duration {
        self.wall.elapsed()
    }
    /// CPU time since the start (None when unknown).
    pub fn cpu(&self) -> Option<Duration> {
        Some(cpu_time()?.saturating_sub(self.cpu?))
    }
    /// "1.20 s wall, 0.95 s CPU".
    pub fn show(&self) -> String {
        match self.cpu() {
            Some(c) => format!("{} wall, {} CPU", secs(self.wall()), secs(c)),
            None => secs(self.wall()),
        }
    }
    /// Rate per second, on wall and (when known) CPU time.
    pub fn rate(&self, n: usize) -> String {
        let w = n as f64 / self.wall().as_secs_f64().max(1e-9);
        match self.cpu() {
            Some(c) => format!("{w:.1}/s wall, {:.1}/s CPU", n as f64 / c.as_secs_f64().max(1e-9)),
            None => format!("{w:.1}/s"),
        }
    }
}

/// Whether progress may be drawn: stderr is a terminal (never in a pipe or a
/// log that someone parses) and the caller wants it.
pub fn progress_wanted(enabled: bool) -> bool {
    enabled && std::io::stderr().is_terminal()
}

fn drawn(pb: ProgressBar, template: &str, label: &str) -> ProgressBar {
    // The templates are constants of this file; a bad one is a bug here.
    let style = ProgressStyle::with_template(template).expect("progress template").progress_chars("=> ");
    pb.set_style(style);
    pb.set_message(label.to_string());
    pb
}

/// A bar over `len` steps on stderr; hidden unless `enabled` and stderr is a terminal.
pub fn bar(len: usize, label: &str, enabled: bool) -> ProgressBar {
    if !progress_wanted(enabled) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    drawn(pb, "  {msg} [{bar:30}] {pos}/{len} {elapsed_precise} (eta {eta})", label)
}

/// A counter with a spinner (for loops bounded by time, not by a count);
/// hidden unless `enabled` and stderr is a terminal.
pub fn spinner(label: &str, enabled: bool) -> ProgressBar {
    if !progress_wanted(enabled) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    // Ticks on its own so that one slow call still shows the tool is alive.
    pb.enable_steady_tick(Duration::from_millis(120));
    drawn(pb, "  {spinner} {msg}: {pos} {elapsed_precise}", label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "freebsd"))]
    fn cpu_clock_advances_with_work() {
        let t0 = cpu_time().expect("CLOCK_THREAD_CPUTIME_ID");
        // Busy work that the optimiser cannot drop.
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let used = cpu_time().unwrap() - t0;
        // A busy thread gets CPU time; the bound is loose for a shared machine.
        assert!(used >= Duration::from_millis(3), "{used:?}");
        assert!(used <= start.elapsed() + Duration::from_millis(20), "{used:?}");
    }

    #[test]
    fn secs_picks_the_unit() {
        assert_eq!(secs(Duration::from_micros(12)), "12.0 us");
        assert_eq!(secs(Duration::from_micros(4560)), "4.56 ms");
        assert_eq!(secs(Duration::from_millis(7890)), "7.89 s");
    }
}
