//! The provider simulator.

#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
}

pub fn command(_args: SandboxArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
