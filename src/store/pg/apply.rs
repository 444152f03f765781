//! Applying transitions and marking a run finished (PostgreSQL).

use super::{Pg, todo};
use crate::store::errors::WriteError;
use crate::store::types::Transition;
use anyhow::Result;

impl Pg {
    pub fn apply(&mut self, _ts: &[Transition]) -> Result<(), WriteError> {
        Err(WriteError::Disk(
            "the PostgreSQL store is not complete yet".into(),
        ))
    }

    pub fn mark_finished(&mut self, _run_id: i64) -> Result<()> {
        todo()
    }
}
