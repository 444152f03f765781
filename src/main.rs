//! The thin `payrun` binary: parse the command line, hand it to the library,
//! print any error with its chain of causes, and exit with the code the
//! library chose (DESIGN.md section 10).

use clap::Parser;

fn main() {
    let cli = payrun::cli::Cli::parse();
    let code = match payrun::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            payrun::exit::FATAL
        }
    };
    std::process::exit(code);
}
