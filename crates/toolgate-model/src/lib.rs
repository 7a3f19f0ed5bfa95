//! The model approver's client (seed 001's fast model stage).
