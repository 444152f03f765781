//! Progress display during a run: bars when a person watches, a plain line
//! every few seconds when stderr is a log (cron, CI), nothing with
//! `--quiet`. The command layer chooses the target; this module only draws
//! on it. What is drawn is a pure function of a [`Figures`] snapshot
//! ([`render_bars`], [`render_line`]), so it is tested with a fake clock:
//! the bars never show work that was not done (a stop leaves them where
//! the work stopped), "executed" never exceeds "initiated", rates are whole
//! numbers and every terminal line fits [`WIDTH`] columns.

use super::{Counters, Ctx};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the plain progress line is written when stderr is not a
/// terminal (cron, CI): often enough to see life, rarely enough to read.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// How often the display is refreshed (and `done` checked).
const TICK: Duration = Duration::from_millis(200);
/// The narrowest terminal still common (and the width of a cron mail).
pub const WIDTH: usize = 80;
/// Cells of each bar: leaves room for the label and `NNNNNNN/NNNNNNN`.
const BAR: usize = 40;

/// Where progress goes, chosen by the command.
pub enum ProgressTarget {
    Hidden,
    /// Two bars (initiated, executed) and a line of figures.
    Bars(indicatif::ProgressDrawTarget),
    /// A plain line every [`PLAIN_PROGRESS_EVERY`], and one at the end.
    Lines(Box<dyn Write + Send>),
}

/// One snapshot of a run's progress: everything the display shows. New
/// figures (the limiter's rate, 429s, latency) are added here and drawn by
/// the render functions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    /// Open payouts the run started with.
    pub total: u64,
    /// Initiated by the provider (this process, plus those resumed already
    /// past initiation).
    pub initiated: u64,
    pub executed: u64,
    pub failed: u64,
    pub unknown: u64,
    /// Provider calls sent by this process.
    pub calls: u64,
    pub elapsed: Duration,
    /// A stop was asked for: no new request leaves.
    pub stopping: bool,
    /// `--initiate-only`: there is no execution bar to fill.
    pub initiate_only: bool,
    /// The limiter's figures in brief (rate settled on, 429s, provider
    /// latency, queue wait); empty when there are none.
    pub limiter: String,
    /// The language of the lines (config `language`).
    pub language: crate::lang::Language,
}

impl Figures {
    /// Whole calls per second since the start.
    pub fn rate(&self) -> u64 {
        let ms = u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX);
        self.calls.saturating_mul(1000) / ms.max(1)
    }
    /// Initiated as shown: an executed payout was initiated, whatever the
    /// counters' order of updates.
    fn shown_initiated(&self) -> u64 {
        self.initiated.max(self.executed).min(self.total)
    }
}

fn bar(done: u64, total: u64) -> String {
    let filled = if total == 0 {
        0
    } else {
        // Rounded down: a bar is full only when every payout is done.
        usize::try_from(u128::from(done.min(total)) * BAR as u128 / u128::from(total))
            .unwrap_or(BAR)
    };
    let mut s = String::with_capacity(BAR + 2);
    s.push('[');
    s.push_str(&"=".repeat(filled));
    if filled < BAR {
        s.push('>');
        s.push_str(&" ".repeat(BAR - filled - 1));
    }
    s.push(']');
    s
}

fn clip(mut s: String) -> String {
    if let Some((i, _)) = s.char_indices().nth(WIDTH) {
        s.truncate(i);
    }
    s
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The three lines drawn on a terminal: two bars and the figures (or the
/// stop notice, which stays until the end).
pub fn render_bars(f: &Figures) -> [String; 3] {
    let t = f.language.text();
    let i = f.shown_initiated();
    let line = |label: &str, n: u64| {
        clip(format!(
            "{label:<9} {} {n}/{total}",
            bar(n, f.total),
            total = f.total
        ))
    };
    let third = if f.stopping {
        t.bar_stopping.to_string()
    } else {
        let mut s = (t.bar_figures)(f.failed, f.unknown, f.rate(), &clock(f.elapsed));
        if !f.limiter.is_empty() {
            s.push_str("  ");
            s.push_str(&f.limiter);
        }
        s
    };
    let exec = if f.initiate_only {
        clip(t.bar_no_execute.to_string())
    } else {
        line(t.bar_labels[1], f.executed)
    };
    [line(t.bar_labels[0], i), exec, clip(third)]
}

/// The plain line written to a log (cron, CI).
pub fn render_line(f: &Figures) -> String {
    let t = f.language.text();
    let mut s = format!(
        "payrun: {}",
        (t.progress_line)(
            f.shown_initiated(),
            f.total,
            f.executed,
            f.failed,
            f.unknown,
            f.rate()
        )
    );
    if !f.limiter.is_empty() {
        s.push_str(", ");
        s.push_str(&f.limiter);
    }
    if f.stopping {
        s.push_str(", ");
        s.push_str(t.progress_stopping);
    }
    // Not clipped: a log line is read whole, and the stop mark must stay.
    s
}

pub(super) struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
    done: Arc<AtomicBool>,
}

/// The figures now. `already` counts payouts resumed past initiation.
fn snapshot(ctx: &Ctx, total: u64, already: u64, started: Instant) -> Figures {
    let c: &Counters = &ctx.counters;
    Figures {
        total,
        initiated: c.initiated.load(Ordering::Relaxed) + already,
        executed: c.executed.load(Ordering::Relaxed),
        failed: c.failed.load(Ordering::Relaxed),
        unknown: c.unknown.load(Ordering::Relaxed),
        calls: c.calls.load(Ordering::Relaxed),
        elapsed: started.elapsed(),
        stopping: ctx.stopping(),
        initiate_only: ctx.opts.initiate_only,
        limiter: ctx.limiter.stats().brief(ctx.opts.language.text()),
        language: ctx.opts.language,
    }
}

impl Progress {
    /// `already`: open payouts that were initiated by an earlier process
    /// (they start on the "initiated" bar).
    pub(super) fn start(
        ctx: Arc<Ctx>,
        total: u64,
        already: u64,
        target: ProgressTarget,
    ) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        if matches!(target, ProgressTarget::Hidden) || total == 0 {
            return Progress { task: None, done };
        }
        let done2 = done.clone();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let figures = || snapshot(&ctx, total, already, started);
            match target {
                ProgressTarget::Bars(draw) => bars(&figures, draw, &done2).await,
                ProgressTarget::Lines(out) => lines(&figures, out, &done2).await,
                ProgressTarget::Hidden => {}
            }
        });
        Progress {
            task: Some(task),
            done,
        }
    }

    pub(super) async fn finish(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.task {
            // Let it draw its last line; it checks `done` every tick.
            let _ = t.await;
        }
    }
}

async fn bars(
    figures: &(dyn Fn() -> Figures + Sync),
    draw: indicatif::ProgressDrawTarget,
    done: &AtomicBool,
) {
    let multi = indicatif::MultiProgress::with_draw_target(draw);
    let style = indicatif::ProgressStyle::with_template("{msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    let rows: Vec<indicatif::ProgressBar> = (0..3)
        .map(|_| {
            let b = multi.add(indicatif::ProgressBar::new(1));
            b.set_style(style.clone());
            b
        })
        .collect();
    loop {
        let finished = done.load(Ordering::Relaxed);
        for (b, text) in rows.iter().zip(render_bars(&figures())) {
            b.set_message(text);
        }
        if finished {
            // `abandon` keeps the last drawing as it is; `finish` would
            // fill the bars with work that was not done.
            for b in &rows {
                b.abandon();
            }
            break;
        }
        tokio::time::sleep(TICK).await;
    }
}

async fn lines(
    figures: &(dyn Fn() -> Figures + Sync),
    mut out: Box<dyn Write + Send>,
    done: &AtomicBool,
) {
    let mut last = Instant::now();
    let mut stop_told = false;
    loop {
        tokio::time::sleep(TICK).await;
        let finished = done.load(Ordering::Relaxed);
        let f = figures();
        let newly_stopping = f.stopping && !stop_told;
        if finished || newly_stopping || last.elapsed() >= PLAIN_PROGRESS_EVERY {
            last = Instant::now();
            stop_told |= f.stopping;
            // A progress line that cannot be written is not worth failing
            // a payout run for.
            let _ = writeln!(out, "{}", render_line(&f));
        }
        if finished {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> Figures {
        Figures {
            total: 266,
            elapsed: Duration::from_secs(secs),
            ..Figures::default()
        }
    }

    #[test]
    fn bars_show_only_work_done_and_fit_eighty_columns() {
        let mut f = at(0);
        let start = render_bars(&f);
        assert!(start[0].contains("[>"), "{start:?}");
        assert!(start[0].ends_with(" 0/266"), "{start:?}");
        f = Figures {
            initiated: 52,
            executed: 57, // counters raced: executed bumped first
            failed: 1,
            calls: 1234,
            elapsed: Duration::from_millis(2500),
            ..at(0)
        };
        let mid = render_bars(&f);
        assert!(mid[0].ends_with(" 57/266"), "initiated ≥ executed: {mid:?}");
        assert!(mid[1].ends_with(" 57/266"), "{mid:?}");
        assert!(mid[2].contains("493 calls/s"), "whole rate: {mid:?}");
        assert!(!mid.iter().any(|l| l.contains('.')), "no decimals: {mid:?}");
        // 57 of 266 fills 8 of 40 cells, not more.
        assert_eq!(mid[1].matches('=').count(), 8, "{mid:?}");
        // Stopped at 182 pending: the bars stay, the notice shows.
        f.stopping = true;
        let stop = render_bars(&f);
        assert_eq!(stop[1], mid[1]);
        assert!(stop[2].starts_with("stopping"), "{stop:?}");
        for l in mid.iter().chain(&stop) {
            assert!(l.chars().count() <= WIDTH, "{l:?}");
        }
        // Full only when all are done; huge totals still fit.
        let full = render_bars(&Figures {
            initiated: 266,
            executed: 266,
            ..at(9)
        });
        assert_eq!(full[1].matches('=').count(), BAR);
        let big = render_bars(&Figures {
            total: u64::MAX,
            initiated: u64::MAX - 1,
            executed: u64::MAX - 1,
            failed: u64::MAX,
            unknown: u64::MAX,
            calls: u64::MAX,
            elapsed: Duration::from_secs(1 << 40),
            ..Figures::default()
        });
        assert_eq!(big[1].matches('=').count(), BAR - 1, "{big:?}");
        for l in &big {
            assert!(l.chars().count() <= WIDTH, "{l:?}");
        }
    }

    #[test]
    fn the_plain_line_is_consistent_and_marks_a_stop() {
        let f = Figures {
            initiated: 3,
            executed: 4,
            calls: 30,
            elapsed: Duration::from_secs(4),
            ..at(4)
        };
        assert_eq!(
            render_line(&f),
            "payrun: 4/266 initiated, 4/266 executed, 0 failed, 0 unknown, 7 calls/s"
        );
        let stopping = Figures {
            stopping: true,
            ..f
        };
        assert!(render_line(&stopping).ends_with(", stopping"));
        assert_eq!(at(0).rate(), 0, "no division by zero");
    }

    #[test]
    fn french_lines_and_bars_speak_french() {
        let f = Figures {
            initiated: 3,
            executed: 2,
            unknown: 1,
            calls: 30,
            elapsed: Duration::from_secs(4),
            language: crate::lang::Language::Fr,
            stopping: true,
            ..at(4)
        };
        assert_eq!(
            render_line(&f),
            "payrun: 3/266 initiés, 2/266 exécutés, 0 en échec, 1 d'issue inconnue, 7 appels/s, arrêt en cours"
        );
        let bars = render_bars(&f);
        assert!(bars[0].starts_with("initiés "), "{bars:?}");
        assert!(bars[1].starts_with("exécutés "), "{bars:?}");
        assert!(bars[2].starts_with("arrêt"), "{bars:?}");
    }

    #[test]
    fn initiate_only_has_no_execution_bar() {
        let f = Figures {
            initiated: 10,
            initiate_only: true,
            ..at(1)
        };
        assert!(render_bars(&f)[1].contains("--initiate-only"));
    }
}
