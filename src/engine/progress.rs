//! Progress display during a run: bars when a person watches, a plain line
//! every few seconds when stderr is a log (cron, CI), nothing with
//! `--quiet`. The command layer chooses the target; this module only draws
//! on it.

use super::{Counters, Ctx};
use crate::limiter::Limiter;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the plain progress line is written when stderr is not a
/// terminal (cron, CI): often enough to see life, rarely enough to read.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// How often the display is refreshed (and `done` checked).
const TICK: Duration = Duration::from_millis(200);

/// Where progress goes, chosen by the command.
pub enum ProgressTarget {
    Hidden,
    /// Two bars (initiated, executed).
    Bars(indicatif::ProgressDrawTarget),
    /// A plain line every [`PLAIN_PROGRESS_EVERY`], and one at the end.
    Lines(Box<dyn Write + Send>),
}

pub(super) struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
    done: Arc<AtomicBool>,
}

/// (initiated, executed, failed, unknown, calls)
fn snapshot(c: &Counters) -> (u64, u64, u64, u64, u64) {
    (
        c.initiated.load(Ordering::Relaxed),
        c.executed.load(Ordering::Relaxed),
        c.failed.load(Ordering::Relaxed),
        c.unknown.load(Ordering::Relaxed),
        c.calls.load(Ordering::Relaxed),
    )
}

impl Progress {
    pub(super) fn start(ctx: Arc<Ctx>, total: u64, target: ProgressTarget) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        if matches!(target, ProgressTarget::Hidden) || total == 0 {
            return Progress { task: None, done };
        }
        let done2 = done.clone();
        let task = tokio::spawn(async move {
            match target {
                ProgressTarget::Bars(draw) => {
                    bars(&ctx.counters, &ctx.limiter, total, draw, &done2).await
                }
                ProgressTarget::Lines(out) => {
                    lines(&ctx.counters, &ctx.limiter, total, out, &done2).await
                }
                ProgressTarget::Hidden => {}
            }
        });
        Progress {
            task: Some(task),
            done,
        }
    }

    pub(super) fn finish(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.task {
            // Let it draw its last line; it checks `done` every tick.
            tokio::task::block_in_place(|| {
                let _ = tokio::runtime::Handle::current().block_on(t);
            });
        }
    }
}

async fn bars(
    c: &Counters,
    limiter: &Limiter,
    total: u64,
    draw: indicatif::ProgressDrawTarget,
    done: &AtomicBool,
) {
    let started = Instant::now();
    let multi = indicatif::MultiProgress::with_draw_target(draw);
    let style = indicatif::ProgressStyle::with_template(
        "{prefix:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta} {msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
    .progress_chars("=> ");
    let init = multi.add(indicatif::ProgressBar::new(total));
    init.set_style(style.clone());
    init.set_prefix("initiated");
    let exec = multi.add(indicatif::ProgressBar::new(total));
    exec.set_style(style);
    exec.set_prefix("executed");
    loop {
        let (i, e, f, u, calls) = snapshot(c);
        init.set_position(i);
        exec.set_position(e);
        let secs = started.elapsed().as_secs_f64().max(0.001);
        exec.set_message(format!(
            "failed {f} unknown {u} | {:.0} calls/s | {}",
            calls as f64 / secs,
            limiter.stats().brief()
        ));
        if done.load(Ordering::Relaxed) {
            init.finish();
            exec.finish();
            break;
        }
        tokio::time::sleep(TICK).await;
    }
}

async fn lines(
    c: &Counters,
    limiter: &Limiter,
    total: u64,
    mut out: Box<dyn Write + Send>,
    done: &AtomicBool,
) {
    let started = Instant::now();
    let mut last = Instant::now();
    loop {
        tokio::time::sleep(TICK).await;
        let finished = done.load(Ordering::Relaxed);
        if finished || last.elapsed() >= PLAIN_PROGRESS_EVERY {
            last = Instant::now();
            let (i, e, f, u, calls) = snapshot(c);
            let secs = started.elapsed().as_secs_f64().max(0.001);
            // A progress line that cannot be written is not worth failing
            // a payout run for.
            let _ = writeln!(
                out,
                "payrun: {i}/{total} initiated, {e}/{total} executed, {f} failed, {u} unknown, {:.0} calls/s, {}",
                calls as f64 / secs,
                limiter.stats().brief()
            );
        }
        if finished {
            break;
        }
    }
}
