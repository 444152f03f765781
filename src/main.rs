//! The thin `payrun` binary: parse the command line, hand it to the library,
//! print any error with its chain of causes, and exit with the code the
//! library chose (DESIGN.md section 10).

use clap::Parser;

fn main() {
    quiet_on_broken_pipe();
    let cli = match payrun::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; a usage error is
            // "could not proceed" (1), never 2, which scripts read as
            // "validation rejected rows".
            let _ = e.print();
            std::process::exit(if e.use_stderr() {
                payrun::exit::FATAL
            } else {
                payrun::exit::OK
            });
        }
    };
    let code = match payrun::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            payrun::exit::FATAL
        }
    };
    std::process::exit(code);
}

/// `payrun status | head` closes the pipe early; Rust ignores SIGPIPE, so
/// `println!` would panic. Such a reader wanted no more output: leave
/// quietly instead. (SIGPIPE is not restored globally: the HTTP client and
/// the sandbox write to sockets, where it would kill the process.)
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(payrun::exit::OK);
        }
        default(info);
    }));
}
